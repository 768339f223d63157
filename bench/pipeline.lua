-- wrk script: each connection sends its requests in pipelined batches (PIPELINE_DEPTH at once, default 16)
-- instead of one at a time, as a flooding client would. wrk counts every pipelined response as a request.
local depth = tonumber(os.getenv("PIPELINE_DEPTH") or "16")
local batch

function init(args)
  local one = wrk.format("GET", wrk.path)
  batch = string.rep(one, depth)
end

function request()
  return batch
end
