import Domain
import Foundation
import Testing

@testable import ExternalPurchase

@Suite("TokenDecoder")
struct TokenDecoderTests {
    struct Vector: Decodable {
        var name: String
        var token: String
        var decoded: ExternalPurchaseToken
        var environment: String
    }

    struct VectorFile: Decodable {
        var vectors: [Vector]
    }

    static let vectors: [Vector] = {
        guard let url = Bundle.module.url(forResource: "apple-tokens", withExtension: "json", subdirectory: "Fixtures"),
            let data = try? Data(contentsOf: url),
            let file = try? JSONDecoder().decode(VectorFile.self, from: data)
        else { return [] }
        return file.vectors
    }()

    static func encode(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }

    @Test func allFourAppleVectorsAreLoaded() {
        #expect(Self.vectors.map(\.name) == ["V1", "V2", "V3", "V4"])
    }

    @Test(arguments: vectors.map(\.name))
    func appleVectorDecodesToItsJSON(name: String) throws {
        let vector = try #require(Self.vectors.first { $0.name == name })
        let token = try TokenDecoder.decode(vector.token).get()
        #expect(token == vector.decoded)
        #expect(token.environment.rawValue == vector.environment)
    }

    @Test(arguments: vectors.map(\.name))
    func appleVectorSurvivesTransportMangling(name: String) throws {
        let vector = try #require(Self.vectors.first { $0.name == name })
        let variants = [
            vector.token.replacingOccurrences(of: "=", with: "%3D"),
            vector.token.replacingOccurrences(of: "=", with: ""),
            "  " + vector.token + "\n",
            vector.token.replacingOccurrences(of: "+", with: " "),
        ]
        for variant in variants {
            #expect(try TokenDecoder.decode(variant).get() == vector.decoded)
        }
    }

    @Test func bothBase64AlphabetsAreAccepted() throws {
        // Bytes chosen so the encoding contains 62 and 63 ('-'/'+' and '_'/'/').
        let json = #"{"appAppleId":1,"bundleId":"a.b","tokenCreationDate":1,"externalPurchaseId":"x","k":"??>>ÿ~"}"#
        let urlSafe = Self.encode(json)
        #expect(urlSafe.contains("-") || urlSafe.contains("_"))
        let standard = urlSafe.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        #expect(try TokenDecoder.decode(urlSafe).get().externalPurchaseId == "x")
        #expect(try TokenDecoder.decode(standard).get().externalPurchaseId == "x")
        #expect(try TokenDecoder.decode(standard.replacingOccurrences(of: "+", with: " ")).get().bundleId == "a.b")
    }

    /// Numbers of 19 or more digits leave the fast reader before they can overflow it (one stopped the server):
    /// in an unknown key they are ignored like any unknown value, in a known one they are refused.
    @Test func numbersTooLongForInt64NeverOverflow() throws {
        for number in ["9999999999999999999", "9223372036854775808", "-9999999999999999999", "99999999999999999999.5"] {
            let ignored =
                #"{"appAppleId":5,"bundleId":"a","tokenCreationDate":1706169600000,"#
                + #""externalPurchaseId":"e","x":\#(number)}"#
            #expect(try TokenDecoder.decode(Self.encode(ignored)).get().externalPurchaseId == "e")
            let known =
                #"{"appAppleId":\#(number),"bundleId":"a","tokenCreationDate":1706169600000,"#
                + #""externalPurchaseId":"e"}"#
            #expect(throws: TokenRejection.self) { try TokenDecoder.decode(Self.encode(known)).get() }
        }
        #expect(throws: TokenRejection.self) {
            try TokenDecoder.decode(Self.encode(#"{"a":9999999999999999999}"#)).get()
        }
    }

    @Test func unknownKeysAreIgnoredAndTokenTypeIsKeptAsSent() throws {
        let json =
            #"{"appAppleId":5,"bundleId":"a","tokenCreationDate":2,"externalPurchaseId":"e","#
            + #""tokenType":"LINK_OUT","future":{"x":[1,2]}}"#
        let token = try TokenDecoder.decode(Self.encode(json)).get()
        #expect(token.tokenType == "LINK_OUT")
        #expect(token.tokenExpirationDate == nil)
    }

    @Test(
        "malformed tokens are refused with a named reason",
        arguments: [
            ("", "empty"),
            ("   ", "empty"),
            (String(repeating: "a", count: 5000), "too_long"),
            ("not base64!", "not_base64"),
            ("abcde", "not_base64"),
            ("ab=c", "not_base64"),
            ("YWJj===", "not_base64"),
            (encode("not json"), "not_json"),
            (encode("[1,2]"), "not_json"),
            (encode(#"{"bundleId":"a","tokenCreationDate":1,"externalPurchaseId":"e"}"#), "missing_field"),
            (encode(#"{"appAppleId":1,"tokenCreationDate":1,"externalPurchaseId":"e"}"#), "missing_field"),
            (encode(#"{"appAppleId":1,"bundleId":"a","externalPurchaseId":"e"}"#), "missing_field"),
            (encode(#"{"appAppleId":1,"bundleId":"a","tokenCreationDate":1}"#), "missing_field"),
            (
                encode(#"{"appAppleId":"1","bundleId":"a","tokenCreationDate":1,"externalPurchaseId":"e"}"#),
                "invalid_field"
            ),
            (
                encode(#"{"appAppleId":1.5,"bundleId":"a","tokenCreationDate":1,"externalPurchaseId":"e"}"#),
                "invalid_field"
            ),
            (
                encode(#"{"appAppleId":1,"bundleId":"a","tokenCreationDate":1,"externalPurchaseId":""}"#),
                "invalid_external_purchase_id"
            ),
            (
                encode(#"{"appAppleId":1,"bundleId":"a b","tokenCreationDate":1,"externalPurchaseId":"e"}"#),
                "invalid_field"
            ),
            (
                encode(#"{"appAppleId":-1,"bundleId":"a","tokenCreationDate":1,"externalPurchaseId":"e"}"#),
                "invalid_field"
            ),
            (
                encode(
                    #"{"appAppleId":1,"bundleId":"a","tokenCreationDate":9,"externalPurchaseId":"e","tokenExpirationDate":5}"#
                ),
                "invalid_field"
            ),
            (
                encode(
                    #"{"appAppleId":1,"bundleId":"a","tokenCreationDate":1,"externalPurchaseId":"e","tokenType":7}"#
                ),
                "invalid_field"
            ),
        ]
    )
    func rejects(token: String, code: String) {
        guard case .failure(let rejection) = TokenDecoder.decode(token) else {
            Issue.record("accepted \(token.prefix(40))")
            return
        }
        #expect(rejection.code == code)
        #expect(!rejection.message.contains(token) || token.trimmingCharacters(in: .whitespaces).isEmpty)
    }

    static let fields = #""appAppleId":1,"tokenCreationDate":1,"externalPurchaseId":"e""#

    @Test(
        "a field named twice is refused, however its second name is spelled",
        arguments: [
            #"{"bundleId":"com.example","bundleId":"com.evil","# + fields + "}",
            #"{"bundleId":"com.example","# + fields + #","bundleId":"com.evil"}"#,
            #"{"bundleId":"com.example","bundle\u0049d":"com.evil","# + fields + "}",
            #"{"bundleId":"com.example", "bundle\u0049\u0064" : "com.evil","# + fields + "}",
            #"{"bundleId":"com.example","x":{"bundleId":[1,"}"]},"bundleId":"com.evil","# + fields + "}",
        ]
    )
    func duplicateFieldsAreRefused(json: String) {
        #expect(TokenDecoder.decode(Self.encode(json)) == .failure(TokenRejection(.duplicateField("bundleId"))))
    }

    /// Foundation's reader takes UTF-16 and UTF-32, where the check for a field named twice reads UTF-8: a token
    /// in UTF-16 carried a second `externalPurchaseId` past it. A UTF-8 byte order mark is read past, and the
    /// check sees the text behind it.
    @Test func aTokenNotInUTF8IsNotJSON() {
        let twice = #"{"bundleId":"com.example","externalPurchaseId":"x","# + Self.fields + "}"
        let utf16: [UInt8] =
            [0xFF, 0xFE] + twice.utf16.flatMap { unit -> [UInt8] in [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        let bigEnd: [UInt8] = twice.utf16.flatMap { unit -> [UInt8] in [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        for json in [utf16, bigEnd] {
            #expect(TokenDecoder.decode(Base64URL.encode(json)) == .failure(TokenRejection(.notJSON)))
        }
        #expect(
            TokenDecoder.decode(Base64URL.encode(TokenDecoder.utf8ByteOrderMark + Array(twice.utf8)))
                == .failure(TokenRejection(.duplicateField("externalPurchaseId")))
        )
        #expect(TokenDecoder.utf8JSONText(Array(#"{"a":"é"}"#.utf8)) != nil)
        #expect(TokenDecoder.utf8JSONText(TokenDecoder.utf8ByteOrderMark + Array("{}".utf8)) == Array("{}".utf8)[...])
        #expect(TokenDecoder.utf8JSONText(Array(#"{"a":1}"#.utf8) + [0]) == nil)
        #expect(TokenDecoder.utf8JSONText([0x7B, 0x22, 0xC3, 0x28, 0x22, 0x7D]) == nil)
    }

    @Test(
        "a comma before a closing bracket is not JSON, though Foundation's reader takes it",
        arguments: [
            #"{"bundleId":"com.example","# + fields + ",}",
            #"{"bundleId":"com.example","# + fields + #","list":[1,2,]}"#,
            #"{"bundleId":"com.example","# + fields + #","x":{"a":1 , }}"#,
        ]
    )
    func trailingCommasAreRefused(json: String) {
        #expect(TokenDecoder.decode(Self.encode(json)) == .failure(TokenRejection(.notJSON)))
    }

    /// What Foundation's reader takes in a member it skips and RFC 8259 does not: a raw control character in a
    /// string, an escape it does not know, a number of no JSON shape; and nesting past `JSONGrammar.maxDepth`.
    @Test(
        "text outside JSON's grammar is refused, wherever it is",
        arguments: [
            #"{"bundleId":"com.example","# + fields + ",\"x\":\"a\tb\"}",
            #"{"bundleId":"com.example","# + fields + #","x":"\x41"}"#,
            #"{"bundleId":"com.example","# + fields + #","x":"\u+041"}"#,
            #"{"bundleId":"com.example","# + fields + #","x":"\u12"}"#,
            #"{"bundleId":"com.example","# + fields + #","x":01}"#,
            #"{"bundleId":"com.example","# + fields + #","x":1.}"#,
            #"{"bundleId":"com.example","# + fields + #","x":.5}"#,
            #"{"bundleId":"com.example","# + fields + #","x":+1}"#,
            #"{"bundleId":"com.example","# + fields + #","x":tru}"#,
            #"{"bundleId":"com.example","# + fields + #","x":[1 2]}"#,
            #"{"bundleId":"com.example","# + fields + #","x":{"a" 1}}"#,
            #"{"bundleId":"com.example","# + fields + #","x":{1:2}}"#,
            #"{"bundleId":"com.example","# + fields + "} x",
            #"{"bundleId":"com.example","# + fields + #","x":"# + String(repeating: "[", count: 600)
                + String(repeating: "]", count: 600) + "}",
            #"{"bundleId":"com.example","# + fields + #","x":"# + String(repeating: "[", count: 40) + "1,"
                + String(repeating: "]", count: 40) + "}",
        ]
    )
    func textOutsideTheGrammarIsRefused(json: String) {
        #expect(TokenDecoder.decode(Self.encode(json)) == .failure(TokenRejection(.notJSON)))
    }

    @Test func everyShapeOfJSONIsAccepted() {
        let valid = [
            "0", "-0", "1.5e10", "-2E-3", "1e+2", #""""#, #""\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00""#, "true",
            "false", "null", "[]", "{}", " [ 1 , { \"a\" : [ ] } ] ", #"{"é":"ü"}"#,
            String(repeating: "[", count: JSONGrammar.maxDepth) + String(repeating: "]", count: JSONGrammar.maxDepth),
        ]
        for text in valid { #expect(JSONGrammar.accepts(Array(text.utf8)), "\(text)") }
        let invalid = ["", " ", "[", "]", "{", #"{"a"}"#, #"{"a":}"#, "[,]", "[1,,2]", "-", "1e", "nul", #""\""#]
        for text in invalid { #expect(!JSONGrammar.accepts(Array(text.utf8)), "\(text)") }
    }

    /// A key named twice is found as deep as the grammar takes: the check used to stop at 32 levels.
    @Test func aRepeatedKeyIsFoundAtAnyDepthTheGrammarTakes() {
        let deep = String(repeating: "[", count: 100) + #"{"a":1,"a":2}"# + String(repeating: "]", count: 100)
        #expect(JSONGrammar.accepts(Array(deep.utf8)))
        #expect(TokenDecoder.duplicateKeyAnywhere(in: Array(deep.utf8)) == "a")
    }

    @Test func commasInStringsAndEmptyContainersAreNoTrailingCommas() throws {
        let json = #"{"bundleId":"com.example","note":",}","list":[],"x":{},"y":[{"a":[1,{}]}],"# + Self.fields + "}"
        #expect(try TokenDecoder.decode(Self.encode(json)).get().bundleId == "com.example")
    }

    @Test func keysThatOnlyLookAlikeAreNotDuplicates() throws {
        // Escapes that decode to other names, nested repeats and key text inside string values are all fine.
        let json =
            #"{"bundleId":"com.example","bundleId\\":"x","note":"\"bundleId\":","#
            + #""nested":{"k":1,"k":2},"list":[{"bundleId":1}],"# + Self.fields + "}"
        #expect(try TokenDecoder.decode(Self.encode(json)).get().bundleId == "com.example")
        let unknownTwice = #"{"bundleId":"a","# + Self.fields + #","extra":1,"extra":2}"#
        #expect(TokenDecoder.decode(Self.encode(unknownTwice)) == .failure(TokenRejection(.duplicateField(nil))))
    }

    @Test(
        "externalPurchaseId takes only the shape Apple issues",
        arguments: [
            ("00000000-0000-0000-0000-000000000000", true),
            ("SANDBOX_2924c319-5205-4188-831a-1ca2c00326b4", true),
            ("e", true),
            (String(repeating: "a", count: 128), true),
            (String(repeating: "a", count: 129), false),
            ("a/b", false),
            ("../../admin/tokens", false),
            ("<script>", false),
            ("a.b", false),
            ("a b", false),
            ("a%2Fb", false),
            ("é", false),
            ("", false),
        ]
    )
    func externalPurchaseIdShape(id: String, accepted: Bool) {
        let json = #"{"appAppleId":1,"bundleId":"a","tokenCreationDate":1,"externalPurchaseId":"\#(id)"}"#
        switch TokenDecoder.decode(Self.encode(json)) {
        case .success(let token): #expect(accepted && token.externalPurchaseId.rawValue == id, "\(id)")
        case .failure(let rejection): #expect(!accepted && rejection.code == "invalid_external_purchase_id", "\(id)")
        }
    }

    @Test(arguments: ["", String(repeating: "T", count: 65), "LINK OUT", #"LINK\u0000OUT"#, #"ACQUISITION\n"#])
    func tokenTypeIsShortAndPrintable(type: String) {
        let json =
            #"{"appAppleId":1,"bundleId":"a","tokenCreationDate":1,"externalPurchaseId":"e","tokenType":"\#(type)"}"#
        #expect(TokenDecoder.decode(Self.encode(json)) == .failure(TokenRejection(.invalidField("tokenType"))))
    }

    @Test func plainTokensTakeTheShortPathAndReadAsJSONDecoderReadsThem() throws {
        for vector in Self.vectors {
            let json = try #require(Base64URL.decode(TokenDecoder.normalize(vector.token.utf8)))
            #expect(TokenDecoder.decodePlain(json) == vector.decoded, "\(vector.name)")
        }
        let head = #"{"appAppleId":1,"bundleId":"a","tokenCreationDate":1,"#
        let inputs = [
            head + #""externalPurchaseId":"e"}"#,
            " \n" + head + #""externalPurchaseId":"e" , "tokenType" : "X", "tokenExpirationDate":0 }"# + "\t",
            head + #""externalPurchaseId":"e","n":-0,"m":123456789012345678,"s":"x"}"#,
            #"{"appAppleId":-5,"bundleId":"","tokenCreationDate":0,"externalPurchaseId":""}"#,
            // Each of these leaves the short path, which must then give no answer of its own.
            head + #""externalPurchaseId":"e","n":1234567890123456789}"#,
            head + #""externalPurchaseId":"e","n":1.0}"#,
            head + #""externalPurchaseId":"e","n":1e3}"#,
            head + #""externalPurchaseId":"e","n":01}"#,
            head + #""externalPurchaseId":"e","n":-}"#,
            head + #""externalPurchaseId":"e","n":null}"#,
            head + #""externalPurchaseId":"e","n":true}"#,
            head + #""externalPurchaseId":"e","n":{}}"#,
            head + #""externalPurchaseId":"e","n":[]}"#,
            head + #""externalPurchaseId":"e\u0041"}"#,
            head + #""externalPurchaseId":"é"}"#,
            head + "\"externalPurchaseId\":\"e\u{7F}\"}",
            head + #""externalPurchaseId":"e","tokenType":null}"#,
            head + #""externalPurchaseId":"e","tokenExpirationDate":"1"}"#,
            head + #""externalPurchaseId":"e"} x"#,
            head + #""externalPurchaseId":"e",}"#,
            head + #""externalPurchaseId":"e""#,
            head + #""externalPurchaseId":"e","bundleId":"b"}"#,
            head + #""externalPurchaseId":"e","x":1,"x":1}"#,
            head + #""externalPurchaseId":7}"#,
            #"{"bundleId":"a","tokenCreationDate":1,"externalPurchaseId":"e"}"#,
            "{}",
            "[]",
            "",
        ]
        var shortPath = 0
        for input in inputs {
            let json = Array(input.utf8)
            guard let plain = TokenDecoder.decodePlain(json) else { continue }
            shortPath += 1
            #expect(try JSONDecoder().decode(ExternalPurchaseToken.self, from: Data(json)) == plain, "\(input)")
            #expect(TokenDecoder.duplicateTopLevelKey(in: json) == nil, "\(input)")
        }
        #expect(shortPath == 4)
    }

    @Test func missingFieldNamesTheField() {
        let result = TokenDecoder.decode(Self.encode(#"{"appAppleId":1,"bundleId":"a","tokenCreationDate":1}"#))
        #expect(result == .failure(TokenRejection(.missingField("externalPurchaseId"))))
    }
}

@Suite("TokenValidator")
struct TokenValidatorTests {
    let validator = TokenValidator(apps: ["com.example": 1_234_567_890])
    let now: Int64 = 1_764_500_000_000

    func token(bundle: String = "com.example", app: Int64 = 1_234_567_890, created: Int64 = 1_706_169_600_000)
        -> ExternalPurchaseToken
    {
        ExternalPurchaseToken(
            appAppleId: app,
            bundleId: BundleID(bundle),
            tokenCreationDate: created,
            externalPurchaseId: "e"
        )
    }

    @Test func acceptsAConsistentTokenHoweverOldButNotFromBeforeTokensExisted() {
        #expect(validator.validate(token(), queryBundleId: "com.example", nowMilliseconds: now) == nil)
        let earliest = TokenValidator.earliestCreationDate
        #expect(validator.validate(token(created: earliest), queryBundleId: nil, nowMilliseconds: now) == nil)
        // Unsigned tokens can carry any date: one from before 2020 is made up (Int64.min overflowed the
        // dashboard's age arithmetic).
        for created in [earliest - 1, 1, 0, -1, Int64.min] {
            #expect(
                validator.validate(token(created: created), queryBundleId: nil, nowMilliseconds: now)?.code
                    == "invalid_field"
            )
        }
    }

    @Test func namesEachInconsistency() {
        #expect(
            validator.validate(token(), queryBundleId: "com.other", nowMilliseconds: now)?.code == "bundle_id_mismatch"
        )
        #expect(
            validator.validate(token(bundle: "com.other"), queryBundleId: nil, nowMilliseconds: now)?.code
                == "bundle_id_not_configured"
        )
        #expect(
            validator.validate(token(app: 9), queryBundleId: nil, nowMilliseconds: now)?.code == "app_apple_id_mismatch"
        )
        #expect(
            validator.validate(token(created: now + 2 * 86_400_000), queryBundleId: nil, nowMilliseconds: now)?.code
                == "creation_date_in_future"
        )
    }

    /// Apple stamps the creation date, so only the skew between Apple's clock and ours is allowed: five minutes.
    /// A made-up token 23 hours ahead used to pass and, landing first, delayed its id's report by as much.
    @Test func aCreationDateMoreThanFiveMinutesAheadIsRefused() {
        let skew: Int64 = 5 * 60_000
        #expect(validator.validate(token(created: now + skew), queryBundleId: nil, nowMilliseconds: now) == nil)
        for created in [now + skew + 1, now + 23 * 3_600_000] {
            #expect(
                validator.validate(token(created: created), queryBundleId: nil, nowMilliseconds: now)?.code
                    == "creation_date_in_future"
            )
        }
    }

    @Test func acceptsOnlyTheTokenTypesAppleIssues() {
        for type in ["ACQUISITION", "SERVICES", "IN_APP", "LINK_OUT", "WITHIN_APP", "OUT_OF_APP"] {
            var typed = token()
            typed.tokenType = type
            #expect(validator.validate(typed, queryBundleId: nil, nowMilliseconds: now) == nil, "\(type)")
        }
        for type in ["FOO", "services", "withinApp", "outOfApp", "ACQUISITION ", "LINKOUT"] {
            var typed = token()
            typed.tokenType = type
            let rejection = validator.validate(typed, queryBundleId: nil, nowMilliseconds: now)
            #expect(rejection?.code == "unknown_token_type", "\(type)")
            #expect(rejection?.message.contains(type) == false, "the message never repeats the value sent")
        }
    }

    @Test func expiryOnlyStopsNewPurchases() {
        var custom = token(created: now - 30 * 86_400_000)
        custom.tokenExpirationDate = now - 1
        #expect(validator.validate(custom, queryBundleId: nil, nowMilliseconds: now) == nil)
        #expect(!custom.acceptsPurchases(atMilliseconds: now))
        #expect(custom.acceptsPurchases(atMilliseconds: now - 1))
        #expect(token().acceptsPurchases(atMilliseconds: now))
    }

    /// An expiry Apple never issues (before the creation, or far beyond a custom-link token's year) is refused:
    /// it would hold the token unreported until then.
    @Test func anExpiryAppleNeverIssuesIsRefused() {
        let created = now - 86_400_000
        for (expiry, accepted) in [
            (created + 365 * 86_400_000, true), (created + 3_600_000, true), (created - 1, false),
            (created + 50 * 365 * 86_400_000, false), (Int64.max, false), (Int64.min, false),
        ] {
            var custom = token(created: created)
            custom.tokenExpirationDate = expiry
            let rejection = validator.validate(custom, queryBundleId: nil, nowMilliseconds: now)
            #expect((rejection == nil) == accepted, "\(expiry)")
            if !accepted { #expect(rejection?.code == "invalid_field") }
        }
    }

    @Test func mintedTokensRoundTrip() throws {
        let minted = TokenMinter.mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: true,
            tokenType: "SERVICES",
            nowMilliseconds: now
        )
        let decoded = try TokenDecoder.decode(TokenMinter.encode(minted)).get()
        #expect(decoded == minted)
        #expect(decoded.environment == .sandbox)
        #expect(decoded.tokenExpirationDate == now + 3_600_000)
        let url = TokenMinter.redirectURL(base: "http://127.0.0.1:8080", token: minted)
        #expect(url.hasPrefix("http://127.0.0.1:8080?externalPurchaseToken="))
        #expect(url.hasSuffix("&bundleId=com.example"))
    }

    /// A repeated key is found in any object, however many objects and lists come before it: the walk goes on
    /// past each object and list it finishes (it used to stop after the first nested one, so a second line item
    /// or a second section naming a key twice went through).
    @Test func aRepeatedKeyIsFoundInAnyObject() {
        let cases: [(json: String, repeated: String?)] = [
            (#"{"server": {"port": 1}, "server": {"port": 2}}"#, "server"),
            (#"{"lineItems": [{"id": 1}, {"id": 2, "id": 3}]}"#, "id"),
            (#"{"a": {"b": {"c": 1}}, "d": [1, [2, 3], {}], "e": {"f": 1, "f": 2}}"#, "f"),
            (#"{"a": [], "b": {}, "a": 1}"#, "a"),
            (#"{"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]}"#, nil),
        ]
        for test in cases {
            #expect(TokenDecoder.duplicateKeyAnywhere(in: Array(test.json.utf8)) == test.repeated, "\(test.json)")
        }
    }
}
