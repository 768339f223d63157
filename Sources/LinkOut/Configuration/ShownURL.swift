import Foundation

/// A configured URL as linkout prints it (`linkout check`, the audit log): its scheme, host and port only. A
/// receiver's URL may carry its credential anywhere else: a user and password, a `?apikey=`, or the path itself
/// (hook services put their secret there, `/services/T0/B0/XXXX`).
enum ShownURL {
    static func text(_ url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host
        else { return "(not a URL)" }
        let port = components.port.map { ":\($0)" } ?? ""
        let hidden =
            components.user != nil || components.password != nil || !["", "/"].contains(components.path)
            || components.query != nil || components.fragment != nil
        return "\(scheme)://\(host)\(port)" + (hidden ? "/…" : "")
    }
}
