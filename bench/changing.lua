-- wrk script for bench/change_log_load.py: every request changes what it sends, and every answer is counted.
-- BENCH_CREDENTIALS ("token,key token,key ..."): one partner's credentials, or several partners' (one drawn per
-- request). BENCH_BATCH_SIZE: 0 for single pushes to externals/push, else records per batch to externals/push/batch.
-- Each wrk thread pushes its own ids (BENCH_IDS of them, thread N's from N * BENCH_IDS + 1 on) in turn, so requests
-- in flight together never share a project (no row lock measured in place of the change log), with an amount that
-- grows with every record it sends, so no push repeats what a project already holds.
local credentials = {}
for token, key in string.gmatch(os.getenv("BENCH_CREDENTIALS") or "", "([^,%s]+),([^,%s]+)") do
  table.insert(credentials, {token, key})
end
local size = tonumber(os.getenv("BENCH_BATCH_SIZE") or "0")
local ids = tonumber(os.getenv("BENCH_IDS") or "5000")
wrk.method = "POST"

local threads = {}

function setup(thread)
  thread:set("thread_number", #threads)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + (thread_number or 0) * 7919)
  counts = {}
end

local sent = 0
local function record()
  sent = sent + 1
  local id = (thread_number or 0) * ids + (sent - 1) % ids + 1
  return string.format(
    '{"id":"HS-%d","data":{"properties":{"dealname":"Residence %d","dealstage":"closedwon",'
      .. '"firstname":"Ana","lastname":"Smith%d","email":"Customer.%d@Example.com","phone":"(503) 421-%04d",'
      .. '"city":"Portland","state":"OR","system_size_w":"%d","panel_count":"%d","amount":"%d.%02d",'
      .. '"closedate":"1767225600000","hs_object_id":"%d"}}}',
    id, id, id, id, id % 10000, 4000 + id % 9000, 10 + id % 30, 15000 + sent, thread_number or 0, 900000 + id)
end

request = function()
  local credential = credentials[math.random(1, #credentials)]
  local headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. credential[1],
    ["ClientID"] = credential[2],
  }
  if size == 0 then
    return wrk.format(nil, nil, headers, record())
  end
  local records = {}
  for index = 1, size do
    records[index] = record()
  end
  return wrk.format(nil, nil, headers, '{"records":[' .. table.concat(records, ",") .. "]}")
end

local function count(name)
  counts[name] = (counts[name] or 0) + 1
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

done = function(summary, latency, requests)
  local totals = {}
  for _, thread in ipairs(threads) do
    for name, value in pairs(thread:get("counts")) do
      totals[name] = (totals[name] or 0) + value
    end
  end
  local names = {}
  for name in pairs(totals) do
    table.insert(names, name)
  end
  table.sort(names)
  local parts = {}
  for _, name in ipairs(names) do
    table.insert(parts, name .. "=" .. totals[name])
  end
  io.write("answers: " .. table.concat(parts, ", ") .. "\n")
end
