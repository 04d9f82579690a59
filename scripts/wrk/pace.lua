-- Pacing for the wrk scripts: pace_init(rate) makes wrk send at most RATE
-- requests a second in all (its threads share the rate), each thread on a
-- fixed schedule of send times, so a run measures latency at a given
-- offered load rather than at saturation (where a closed loop of N
-- connections only measures N / throughput). A request whose slot has
-- passed (every connection was busy) is sent at once and the schedule does
-- not catch up, so a server that cannot keep up shows as a lower achieved
-- rate than asked: read wrk's Requests/sec beside the latencies.
-- pace_init(0) leaves wrk unpaced (as fast as the connections go).
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } pace_timespec;
int clock_gettime(int clk, pace_timespec *ts);
]]
local CLOCK_MONOTONIC = 1
local ts = ffi.new("pace_timespec")

local function now_ms()
    ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
    return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

function pace_init(rate, nthreads)
    if not rate or rate <= 0 then
        return
    end
    local interval = nthreads * 1000 / rate   -- ms between this thread's sends
    local next_ms = nil
    -- wrk calls delay() before each request and sends it that many ms later
    delay = function()
        local t = now_ms()
        if next_ms == nil or next_ms < t then
            next_ms = t
        end
        local d = next_ms - t
        next_ms = next_ms + interval
        return d
    end
end
