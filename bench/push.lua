-- wrk script for bench/push_load.py: HubSpot-shaped deals, ids drawn from 20,000 (mostly updates once warm).
-- BENCH_TOKEN and BENCH_CLIENT_ID: one partner's credentials. BENCH_CREDENTIALS ("token,key token,key ..."):
-- several partners', one drawn per request, the 20,000 ids shared out among them.
local credentials = {}
for token, key in string.gmatch(os.getenv("BENCH_CREDENTIALS") or "", "([^,%s]+),([^,%s]+)") do
  table.insert(credentials, {token, key})
end
local token = os.getenv("BENCH_TOKEN") or ""
if token ~= "" then
  table.insert(credentials, {token, os.getenv("BENCH_CLIENT_ID") or ""})
end
local ids = math.floor(20000 / math.max(1, #credentials))
wrk.method = "POST"

local counter = 0
request = function()
  counter = counter + 1
  local headers = {["Content-Type"] = "application/json"}
  if #credentials > 0 then
    local credential = credentials[math.random(1, #credentials)]
    headers["Authorization"] = "Bearer " .. credential[1]
    headers["ClientID"] = credential[2]
  end
  local id = math.random(1, ids)
  local body = string.format(
    '{"id":"HS-%d","data":{"properties":{"dealname":"Residence %d","dealstage":"closedwon",'
      .. '"firstname":"Ana","lastname":"Smith%d","email":"Customer.%d@Example.com","phone":"(503) 421-%04d",'
      .. '"city":"Portland","state":"OR","system_size_w":"%d","panel_count":"%d","amount":"%d.00",'
      .. '"closedate":"1767225600000","hs_object_id":"%d"}}}',
    id, id, id, id, id % 10000, 4000 + id % 9000, 10 + id % 30, 15000 + counter % 30000, 900000 + id)
  return wrk.format(nil, nil, headers, body)
end
