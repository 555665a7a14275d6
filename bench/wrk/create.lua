-- wrk script: POST /v2/transaction with pre-signed, unique bodies read from a file (one JSON per
-- line; each thread takes every n-th line), and a JSON summary of the latency tail at the end.
-- Usage: wrk -t2 -c200 -d10s --timeout 10s -s create.lua URL -- BODIES_FILE 2
local counter = 0
function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
end

local bodies = {}
local idx = 0
local headers = { ["Content-Type"] = "application/json;charset=UTF-8" }
function init(args)
  local file, nthreads = args[1], tonumber(args[2])
  local i = 0
  for line in io.lines(file) do
    if line ~= "" and i % nthreads == tid then bodies[#bodies + 1] = line end
    i = i + 1
  end
end

function request()
  idx = idx + 1
  if idx > #bodies then idx = 1 end
  return wrk.format("POST", "/v2/transaction", headers, bodies[idx])
end

function done(summary, latency, requests)
  local ms = function(us) return us / 1000 end
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"requests":%d,"seconds":%f,"p50":%f,"p90":%f,"p99":%f,"p999":%f,"p9999":%f,"max":%f,"mean":%f,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}}\n',
    summary.requests, summary.duration / 1e6,
    ms(latency:percentile(50)), ms(latency:percentile(90)), ms(latency:percentile(99)),
    ms(latency:percentile(99.9)), ms(latency:percentile(99.99)), ms(latency.max), ms(latency.mean),
    e.connect, e.read, e.write, e.status, e.timeout))
end
