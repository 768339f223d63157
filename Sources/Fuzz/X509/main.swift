// libFuzzer target `x509`: DER certificates as they arrive in a notification's x5c, through OpenSSL's parser and
// everything linkout asks of a certificate (extensions, validity, key), and the chain check with the fixed test
// root: the input as a leaf, and as the intermediate under the test leaf.
import Crypto
import LinkOutFuzzSupport

let chainVerifier = X509ChainVerifier(trustedRoots: [FuzzChain.root])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let certificate = try? X509Certificate(der: bytes) else { return 0 }
    _ = certificate.description
    _ = certificate.hasExtension(oid: "1.2.840.113635.100.6.11.1")
    _ = certificate.hasExtension(oid: "1.2.840.113635.100.6.2.1")
    _ = certificate.isValid(atSeconds: FuzzChain.signedAtSeconds)
    _ = try? certificate.publicKey()
    _ = try? chainVerifier.verify(leaf: certificate, intermediates: [], atSeconds: FuzzChain.signedAtSeconds)
    _ = try? chainVerifier.verify(
        leaf: FuzzChain.leaf,
        intermediates: [certificate],
        atSeconds: FuzzChain.signedAtSeconds
    )
    return 0
}
