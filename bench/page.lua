-- wrk script for bench/list_cost.py's pages: the headers come from wrk's -H; every answer is counted by HTTP status,
-- and a 200 whose page is empty apart ("empty"), in one line after wrk's figures ("answers: http 200=...").
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "answers.lua") -- setup, init, count and done

response = function(status, headers, body)
  count("http " .. status)
  if status == 200 and string.find(body, '"items":[]', 1, true) then
    count("empty")
  end
end
