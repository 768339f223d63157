/// Who tied a token to a customer's `appAccountToken`. The app's `POST /v1/tokens` is unauthenticated, so
/// whoever forwards a token first could name any account; the developer's backend (bearer `LINKOUT_API_TOKEN`)
/// is the authority and may replace an app's binding, never the other way round.
public enum AccountBindingSource: String, Sendable {
    case app
    case backend
}

/// What forwarding a token did to its `appAccountToken` binding.
public enum AccountBinding: Sendable, Equatable {
    /// The request named no account.
    case none
    /// The token had no account; now it has the one named.
    case bound
    /// The same account was bound already (a backend's word may have made it authoritative).
    case unchanged
    /// The backend replaced an account the app had bound; `previous` is the account it had.
    case replaced(previous: String)
    /// Another account is bound and stays: the app cannot change any binding, the backend not its own.
    case conflict
}
