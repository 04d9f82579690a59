-- wrk script: GET /v1/jobs/{id} over the ids post_jobs.lua created (thread
-- 0's first N, N from the first script argument; then optionally a total
-- rate in requests a second and wrk's thread count, scripts/wrk/pace.lua).
-- Used by scripts/bench-api-wrk.sh.
dofile("scripts/wrk/pace.lua")
local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    limit = tonumber(args[1]) or 1000
    pace_init(tonumber(args[2]), tonumber(args[3]) or 1)
    k = 0
    bad = 0
end

function request()
    k = k % limit + 2      -- wrk builds (and drops) one request per thread first: w0-1 never went
    return wrk.format("GET", string.format("/v1/jobs/w0-%d", k))
end

function response(status, headers, body)
    if status ~= 200 then
        bad = bad + 1
    end
end

function done(summary, latency, requests)
    local b = 0
    for _, t in ipairs(threads) do
        b = b + t:get("bad")
    end
    io.write(string.format("non-200 answers: %d\n", b))
end
