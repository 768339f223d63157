import Storage

/// An app's account token as linkout hands it out after `linkout erase --account-token`: `[erased]` once the
/// account was erased. The token's own row keeps the account (Apple's reporting needs it), so whatever is made
/// from it later (an entitlement event, a redemption's answer, a credential a code issued before the erasure
/// makes) asks here, through the keyed hash of erased accounts the ledger keeps (never the token itself).
enum ErasedAccount {
    static func shown(_ account: String?, ledger: Ledger, identifiers: Identifiers) throws -> String? {
        guard let account else { return nil }
        let erased = try ledger.privacy.isErased(accountKey: identifiers.erasedAccountKey(account))
        return erased ? PrivacyStore.erased : account
    }
}
