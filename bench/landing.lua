-- wrk script: every request is a StoreKit-style landing visit with a fresh token (a new externalPurchaseId),
-- so each one is decoded, validated and durably recorded. To keep wrk's own CPU use close to a plain run, the
-- Base64URL of the JSON's fixed start is computed once; each request encodes only its id's last characters.
local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

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

-- Seeded from the clock so the warm-up run and the measured run mint different ids.
math.randomseed(os.time())
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", string.format("%d%d%09d", os.time(), threads, math.random(1, 999999999)))
end

local encodedPrefix
local counter = 0

function init(args)
  -- Created now, as StoreKit's tokens are: an old date would make every token due for NO_LINE_ITEM at once and
  -- measure the reporting planner (which runs beside the landings) instead of the landing path.
  local head = '{"appAppleId":1234567890,"bundleId":"com.example","tokenCreationDate":' .. os.time() .. '000,'
  local tail = '"externalPurchaseId":"bench-' .. id .. '-'
  -- Pad between two JSON members with spaces (insignificant whitespace) so the prefix is a whole number of
  -- 3-byte groups and encodes on its own, without bits shared with the per-request suffix.
  while (#head + #tail) % 3 ~= 0 do head = head .. " " end
  encodedPrefix = base64url(head .. tail)
end

function request()
  counter = counter + 1
  local suffix = string.format('%012d"}', counter)
  return wrk.format("GET", "/?externalPurchaseToken=" .. encodedPrefix .. base64url(suffix) .. "&bundleId=com.example")
end
