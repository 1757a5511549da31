-- wrk script for bench/batch_load.py: batches of BENCH_BATCH_SIZE HubSpot-shaped deals (the records push.lua
-- sends one at a time), ids drawn from 20,000 (mostly updates once warm).
local token = os.getenv("BENCH_TOKEN") or ""
local client_id = os.getenv("BENCH_CLIENT_ID") or ""
local size = tonumber(os.getenv("BENCH_BATCH_SIZE") or "100")
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. token
wrk.headers["ClientID"] = client_id

local counter = 0
local function record()
  counter = counter + 1
  local id = math.random(1, 20000)
  return string.format(
    '{"id":"HS-%d","data":{"properties":{"dealname":"Residence %d","dealstage":"closedwon",'
      .. '"firstname":"Ana","lastname":"Smith%d","email":"Customer.%d@Example.com","phone":"(503) 421-%04d",'
      .. '"city":"Portland","state":"OR","system_size_w":"%d","panel_count":"%d","amount":"%d.00",'
      .. '"closedate":"1767225600000","hs_object_id":"%d"}}}',
    id, id, id, id, id % 10000, 4000 + id % 9000, 10 + id % 30, 15000 + counter % 30000, 900000 + id)
end

request = function()
  local records = {}
  for index = 1, size do
    records[index] = record()
  end
  return wrk.format(nil, nil, nil, '{"records":[' .. table.concat(records, ",") .. "]}")
end
