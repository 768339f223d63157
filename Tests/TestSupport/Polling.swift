import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Checks `condition` every millisecond until it holds or `seconds` have passed. Returns whether it held, so a
/// caller that `#expect`s the result fails instead of hanging when the awaited thing never happens.
public func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date() + seconds
    while !condition() {
        guard Date() < deadline else { return false }
        usleep(1000)
    }
    return true
}
