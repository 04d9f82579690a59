-- wrk script: POST /v1/jobs with a unique id per request (thread, counter),
-- so every request is a new durable submission (a 201), never an
-- idempotent replay. Script arguments: the jobs' duration_s (60), then
-- optionally a total rate in requests a second and wrk's thread count
-- (scripts/wrk/pace.lua; none: unpaced). Used by scripts/bench-api-wrk.sh.
dofile("scripts/wrk/pace.lua")
local threads = {}
local next_tid = 0

function setup(thread)
    thread:set("tid", next_tid)
    next_tid = next_tid + 1
    table.insert(threads, thread)
end

function init(args)
    n = 0
    bad = 0
    duration = tonumber(args[1]) or 60
    pace_init(tonumber(args[2]), tonumber(args[3]) or 1)
end

function request()
    n = n + 1
    local body = string.format('{"id":"w%d-%d","profile":"1g.5gb","duration_s":%g}', tid, n, duration)
    return wrk.format("POST", "/v1/jobs", { ["Content-Type"] = "application/json" }, body)
end

function response(status, headers, body)
    if status ~= 201 then
        bad = bad + 1
    end
end

function done(summary, latency, requests)
    local b = 0
    for _, t in ipairs(threads) do
        b = b + t:get("bad")
    end
    io.write(string.format("non-201 answers: %d\n", b))
end
