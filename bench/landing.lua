-- wrk script: every request is a StoreKit-style landing visit with a fresh token (a new externalPurchaseId),
-- so each one is decoded, validated and durably recorded.
local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
local counter = 0
prefix = "bench"  -- replaced per thread in setup()

local function base64url(data)
  local out = {}
  for i = 1, #data, 3 do
    local a, b, c = data:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local chars = 4
    if not b then chars = 2 elseif not c then chars = 3 end
    for j = 1, chars do
      local index = math.floor(n / 2 ^ (6 * (4 - j))) % 64
      out[#out + 1] = alphabet:sub(index + 1, index + 1)
    end
  end
  return table.concat(out)
end

local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("prefix", string.format("bench-%d-%d", threads, math.random(1, 1000000000)))
end

function request()
  counter = counter + 1
  local json = string.format(
    '{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":1764500000000,"externalPurchaseId":"%s-%d"}',
    prefix, counter)
  return wrk.format("GET", "/?externalPurchaseToken=" .. base64url(json) .. "&bundleId=com.example")
end
