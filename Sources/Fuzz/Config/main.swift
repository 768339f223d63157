// libFuzzer target `config`: config.json through the decoder and every section's validation, the way
// `linkout serve` reads it before anything starts.
import Foundation
import LinkOut

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    if let configuration = try? Configuration.parse(bytes) {
        _ = configuration.httpServer
    }
    return 0
}
