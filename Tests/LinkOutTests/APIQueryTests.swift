import Foundation
import TestSupport
import Testing

@testable import LinkOut

/// Query parameters of the JSON API are read as the OpenAPI document states them: a value out of its range or of
/// the wrong form is a `400` naming it, never a silent default or an answer for another parameter.
@Suite("API query parameters")
struct APIQueryTests {
    func errorCode(_ response: RawClient.Response) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return (object?["error"] as? [String: Any])?["code"] as? String
    }

    @Test func adminListsRefuseALimitOrOffsetOutOfRange() throws {
        let live = try LiveApplication { $0.adminToken = "admin-secret" }
        let auth = ["Authorization": "Bearer admin-secret"]
        for list in ["/admin/tokens", "/admin/reports", "/admin/purchases", "/admin/webhooks"] {
            for query in ["limit=abc", "limit=0", "limit=1001", "limit=+5", "limit=", "limit=99999999999999999999"] {
                let response = try live.get("\(list)?\(query)", headers: auth)
                #expect(response.status == 400, "\(list)?\(query)")
                #expect(errorCode(response) == "invalid_limit", "\(list)?\(query)")
            }
            for query in ["offset=-1", "offset=x", "offset=1000000001", "offset=1.5"] {
                let response = try live.get("\(list)?\(query)", headers: auth)
                #expect(response.status == 400, "\(list)?\(query)")
                #expect(errorCode(response) == "invalid_offset", "\(list)?\(query)")
            }
            for query in ["", "?limit=1", "?limit=1000&offset=0", "?offset=1000000000"] {
                #expect(try live.get(list + query, headers: auth).status == 200, "\(list)\(query)")
            }
        }
    }

    @Test func purchasesRefuseAMalformedKeyEvenBesideAGoodOne() throws {
        let live = try LiveApplication { $0.apiToken = "backend-secret" }
        let auth = ["Authorization": "Bearer backend-secret"]
        let long = String(repeating: "a", count: 129)
        for query in [
            "appAccountToken=not-a-uuid&externalPurchaseId=abc", "appAccountToken=", "externalPurchaseId=",
            "externalPurchaseId=\(long)",
            // Two keys, or one twice: answering for the first would quietly drop what the client also asked.
            "appAccountToken=8F0C2A52-2F3C-4B7E-9A39-2D1B6F0E4C11&externalPurchaseId=abc",
            "externalPurchaseId=abc&externalPurchaseId=def",
            // Not of the shape of Apple's ids: a NUL or a line break found nothing and answered 200.
            "externalPurchaseId=%00", "externalPurchaseId=a%0Ab", "externalPurchaseId=a.b",
        ] {
            let response = try live.get("/v1/purchases?\(query)", headers: auth)
            #expect(response.status == 400, "\(query)")
            #expect(errorCode(response) == "invalid_query", "\(query)")
        }
        #expect(errorCode(try live.get("/v1/purchases", headers: auth)) == "missing_query")
        let uuid = "8F0C2A52-2F3C-4B7E-9A39-2D1B6F0E4C11"
        #expect(try live.get("/v1/purchases?appAccountToken=\(uuid)", headers: auth).status == 200)
        #expect(try live.get("/v1/purchases?externalPurchaseId=abc", headers: auth).status == 200)
    }
}
