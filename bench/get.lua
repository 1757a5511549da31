-- wrk script for bench/request_cost.py's GET rows: the headers come from wrk's -H; every answer is counted by HTTP
-- status and printed in one line after wrk's figures ("answers: http 404=...").
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "answers.lua") -- setup, init, count and done

response = function(status, headers, body)
  count("http " .. status)
end
