-- wrk script for bench/platform_patch.py: the PATCHes its Python client sends, from C, so that the load generator
-- takes little of the two cores. Each request a project drawn at random from BENCH_IDS_FILE (one UUID a line) under
-- BENCH_PATH (the platform's ".../projects/" or the bare baseline's), `If-Match: *`, and a note no request sent
-- before (the wrk thread, its count, and BENCH_RUN), so every PATCH writes. BENCH_KEY: the platform key (none: no
-- Authorization, for the baseline). Answers are counted by status: "answers: http 200=...".
local path = os.getenv("BENCH_PATH") or "/platform/api/v1/projects/"
local key = os.getenv("BENCH_KEY") or ""
local run = os.getenv("BENCH_RUN") or tostring(os.time())
local ids = {}
for line in io.lines(os.getenv("BENCH_IDS_FILE")) do
  table.insert(ids, line)
end

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "answers.lua") -- setup, init, count and done

local sent = 0
local headers = {["Content-Type"] = "application/merge-patch+json", ["If-Match"] = "*"}
if key ~= "" then
  headers["Authorization"] = "Bearer " .. key
end

request = function()
  sent = sent + 1
  local body = string.format('{"note":"wrk %s-%d-%d","stage":"permitting"}', run, thread_number or 0, sent)
  return wrk.format("PATCH", path .. ids[math.random(1, #ids)], headers, body)
end

response = function(status, headers, body)
  count("http " .. status)
end
