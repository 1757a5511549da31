-- wrk script for bench/change_log_load.py, bench/push_load.py and (through bench/push.lua) bench/batch_load.py:
-- every request changes what it sends, and every answer is counted.
-- BENCH_CREDENTIALS ("token,key token,key ..."): one partner's credentials, or several partners' (one drawn per
-- request); BENCH_TOKEN and BENCH_CLIENT_ID add one more; none at all: no credentials sent (bench/baseline).
-- BENCH_BATCH_SIZE: 0 for single pushes to externals/push, else records per batch to externals/push/batch.
-- Each wrk thread pushes its own ids (BENCH_IDS of them, thread N's from N * BENCH_IDS + 1 on) in turn, so requests
-- in flight together never share a project (no row lock measured in place of the change log), with an amount that
-- grows with every record it sends and a stamp of the run (BENCH_RUN, default the clock's second), so no push
-- repeats what a project already holds, not even one a warm-up run sent. The answers are counted by HTTP status,
-- record status (batches) and changed / unchanged, and printed in one line: "answers: http 200=..., changed=...".
local credentials = {}
for token, key in string.gmatch(os.getenv("BENCH_CREDENTIALS") or "", "([^,%s]+),([^,%s]+)") do
  table.insert(credentials, {token, key})
end
if (os.getenv("BENCH_TOKEN") or "") ~= "" then
  table.insert(credentials, {os.getenv("BENCH_TOKEN"), os.getenv("BENCH_CLIENT_ID") or ""})
end
local run = os.getenv("BENCH_RUN") or tostring(os.time())
local size = tonumber(os.getenv("BENCH_BATCH_SIZE") or "0")
local ids = tonumber(os.getenv("BENCH_IDS") or "5000")
wrk.method = "POST"

local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "answers.lua") -- setup, init, count and done

local sent = 0
local function record()
  sent = sent + 1
  local id = (thread_number or 0) * ids + (sent - 1) % ids + 1
  return string.format(
    '{"id":"HS-%d","data":{"properties":{"dealname":"Residence %d","dealstage":"closedwon",'
      .. '"firstname":"Ana","lastname":"Smith%d","email":"Customer.%d@Example.com","phone":"(503) 421-%04d",'
      .. '"city":"Portland","state":"OR","system_size_w":"%d","panel_count":"%d","amount":"%d.%02d",'
      .. '"closedate":"1767225600000","hs_object_id":"%d","hs_lastmodifieddate":"%s-%d"}}}',
    id, id, id, id, id % 10000, 4000 + id % 9000, 10 + id % 30, 15000 + sent, thread_number or 0, 900000 + id,
    run, sent)
end

request = function()
  local headers = {["Content-Type"] = "application/json"}
  if #credentials > 0 then
    local credential = credentials[math.random(1, #credentials)]
    headers["Authorization"] = "Bearer " .. credential[1]
    headers["ClientID"] = credential[2]
  end
  if size == 0 then
    return wrk.format(nil, nil, headers, record())
  end
  local records = {}
  for index = 1, size do
    records[index] = record()
  end
  return wrk.format(nil, nil, headers, '{"records":[' .. table.concat(records, ",") .. "]}")
end

response = function(status, headers, body)
  count("http " .. status)
  if size > 0 then
    for record_status in string.gmatch(body, '"status":(%d+)') do
      count("record " .. record_status)
    end
  end
  for changed in string.gmatch(body, '"changed":(%a+)') do
    count(changed == "true" and "changed" or "unchanged")
  end
end
