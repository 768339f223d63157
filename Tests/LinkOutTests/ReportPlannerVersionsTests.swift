import Domain
import Foundation
import Storage
import Testing

@testable import LinkOut

@Suite("The versions a report carries")
struct ReportPlannerVersionsTests {
    static func stored(_ row: Int64, _ lineItemId: String) throws -> StoredLineItem {
        let json =
            #"{"rowId":\#(row),"externalPurchaseId":"token","lineItemId":"\#(lineItemId)","body":"{}","receivedAt":1}"#
        return try JSONDecoder().decode(StoredLineItem.self, from: Data(json.utf8))
    }

    /// The latest version of each line item, in the place of its first: a buy restated after its refund was stored
    /// stays ahead of the refund that refers to it (it followed the refund, which Apple may refuse as naming a buy
    /// it has not seen yet).
    @Test func aRestatedBuyKeepsItsPlaceAheadOfItsRefunds() throws {
        let carried = [try Self.stored(1, "buy"), try Self.stored(2, "buy:refund:1"), try Self.stored(3, "buy")]
        #expect(ReportPlanner.latestVersions(carried).map(\.rowId) == [3, 2])
    }
}
