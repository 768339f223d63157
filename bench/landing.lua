-- wrk script: every request is a StoreKit-style landing visit with a fresh token (a new externalPurchaseId),
-- so each one is decoded, validated and durably recorded. To keep wrk's own CPU use close to a plain run, the
-- Base64URL of the JSON's fixed start is computed once; each request encodes only its id.
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

-- Each thread seeds its own generator (every thread runs this file in a Lua state of its own, and the clock alone
-- would give both the same sequence); the warm-up run and the measured run mint different ids.
math.randomseed(os.time())
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("seed", os.time() * 16 + threads * 1000003 + math.random(1, 999999))
end

local encodedPrefix

function init(args)
  math.randomseed(seed)
  local head = '{"appAppleId":1234567890,"bundleId":"com.example",'
  local tail = '"externalPurchaseId":"'
  -- Pad between two JSON members with spaces (insignificant whitespace) so the prefix is a whole number of
  -- 3-byte groups and encodes on its own, without bits shared with the per-request suffix.
  while (#head + #tail) % 3 ~= 0 do head = head .. " " end
  encodedPrefix = base64url(head .. tail)
end

-- A random version-4 UUID, the shape of Apple's externalPurchaseId. Random, not counted: the ledger indexes tokens
-- by this id, and ids in order would make every insert an append and hide what random ids cost it.
local function uuid()
  return string.format('%08x-%04x-4%03x-%04x-%04x%08x', math.random(0, 0xffffffff), math.random(0, 0xffff),
    math.random(0, 0xfff), math.random(0x8000, 0xbfff), math.random(0, 0xffff), math.random(0, 0xffffffff))
end

-- Created now, as StoreKit's tokens are (at the tap, a moment before the landing): an old date would make every
-- token due for NO_LINE_ITEM at once and measure the reporting planner instead of the landing path, and one date
-- for a whole run would not advance as real traffic's do (checkout ids lead with it). The clock is read in
-- seconds, so the date comes after the id, in the part encoded per request.
function request()
  local suffix = uuid() .. '","tokenCreationDate":' .. os.time() .. '000}'
  return wrk.format("GET", "/?externalPurchaseToken=" .. encodedPrefix .. base64url(suffix) .. "&bundleId=com.example")
end
