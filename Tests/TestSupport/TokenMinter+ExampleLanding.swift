package import Domain
package import ExternalPurchase

extension TokenMinter {
    /// A fresh production token of the example app (`com.example`, Apple ID 1234567890) created at
    /// `nowMilliseconds`, and the landing path StoreKit would open with it.
    package static func exampleLanding(at nowMilliseconds: Int64) -> (token: ExternalPurchaseToken, path: String) {
        let token = mint(
            bundleId: "com.example",
            appAppleId: 1_234_567_890,
            sandbox: false,
            tokenType: nil,
            nowMilliseconds: nowMilliseconds
        )
        return (token, "/?externalPurchaseToken=\(encode(token))&bundleId=com.example")
    }
}
