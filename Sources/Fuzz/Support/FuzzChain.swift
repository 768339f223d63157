public import Crypto
import ExternalPurchase
import Foundation

/// The chain the signed seeds were made with: a P-256 root, an intermediate with Apple's WWDR marker OID and a
/// leaf with the receipt-signer OID, shaped like Apple's (minted once by the tests' `TestCertificateChain`; the
/// keys were not kept, so nothing new can be signed under it). Valid 2020-01-01 to 2040-01-01.
public enum FuzzChain {
    /// The trusted root of the fuzz targets, as `SignedPayloadVerifier` pins Apple's.
    public static let root = certificate(pem: rootPEM)
    /// The leaf that signed the seeds.
    public static let leaf = certificate(base64: leafDER.joined())
    /// The seeds' `signedDate` (2025-01-01) in seconds: a moment when the whole chain is valid.
    public static let signedAtSeconds: Int64 = 1_735_689_600

    static let rootPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBhTCCASugAwIBAgIBATAKBggqhkjOPQQDAjAqMREwDwYDVQQKDAhUZXN0IFBL
        STEVMBMGA1UEAwwMVGVzdCBSb290IENBMB4XDTIwMDEwMTAwMDAwMFoXDTQwMDEw
        MTAwMDAwMFowKjERMA8GA1UECgwIVGVzdCBQS0kxFTATBgNVBAMMDFRlc3QgUm9v
        dCBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABFCLxPbYgY0sWcNt/ONKZGO2
        O4hHPXjnO0j46v1kxN5bKL9uOG3VYOJcWb7Car8mKAHQXZRZaMnkFqU3MEwTspCj
        QjBAMB0GA1UdDgQWBBQnFV7CDxhCasb5pV702hd8Ry96UTAPBgNVHRMBAf8EBTAD
        AQH/MA4GA1UdDwEB/wQEAwIBBjAKBggqhkjOPQQDAgNIADBFAiEA/5Sho5ZF7dYk
        HKBqSVctavHEHjNAuHXGtz2bRLSw9oACIEH2ZA0cMEWNoNZoJ9Mjfh0LycbOg9Ot
        5NOpOzj2DXRb
        -----END CERTIFICATE-----
        """

    static let leafDER = [
        "MIIBczCCARmgAwIBAgIBAzAKBggqhkjOPQQDAjAfMR0wGwYDVQQDDBRUZXN0IEludGVybWVkaWF0ZSBDQTAeFw0yMDAxMDEw",
        "MDAwMDBaFw00MDAxMDEwMDAwMDBaMBQxEjAQBgNVBAMMCVRlc3QgTGVhZjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABHnH",
        "nuMP53Ksh+Ykb4h4HqXcSpW8Hp1CO1WWPsHqwUaa0pDmLQHMFOqcdJ4/d9toEfCPBTS/gScxLT+QOLHCJa2jUTBPMB0GA1Ud",
        "DgQWBBSMsuF6IkXwOZcGnyRMO7+WG2cDbTAMBgNVHRMBAf8EAjAAMA4GA1UdDwEB/wQEAwIHgDAQBgoqhkiG92NkBgsBBAIF",
        "ADAKBggqhkjOPQQDAgNIADBFAiAC23nIdc581Wu4HAngTw/ToJDrezV87FrEsLUznHJsMAIhAOJIfZvJ27lXw7EdHZ0B/509",
        "G3at0hicFrt5ZD8GPAgE",
    ]

    static func certificate(pem: String) -> X509Certificate {
        do {
            return try X509Certificate(pem: pem)
        } catch {
            fatalError("the fuzz chain's root does not parse: \(error)")
        }
    }

    static func certificate(base64: String) -> X509Certificate {
        guard let der = Data(base64Encoded: base64), let certificate = try? X509Certificate(der: Array(der)) else {
            fatalError("the fuzz chain's leaf does not parse")
        }
        return certificate
    }
}
