-- Loaded by the wrk scripts of bench/ (dofile): wrk's threads numbered, each with its own answer counts, and the
-- counts of every thread summed in one line after wrk's figures: "answers: http 200=..., changed=...". Each
-- thread's random numbers are its own.
local threads = {}

function setup(thread)
  thread:set("thread_number", #threads)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(os.time() + (thread_number or 0) * 7919)
  counts = {}
end

function count(name)
  counts[name] = (counts[name] or 0) + 1
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
