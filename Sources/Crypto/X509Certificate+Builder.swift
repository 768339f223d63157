import CCrypto

extension X509Certificate {
    /// Mints certificates with EC P-256 keys: roots, intermediates and leaves with chosen extension OIDs and
    /// validity. Tests need chains of their own shaped like Apple's (nobody holds Apple's keys), so this is
    /// package API: visible to the package's tests, never to an application.
    package struct Builder {
        /// The subject's common name.
        package var commonName: String
        /// The subject's organization, if any.
        package var organization: String?
        package var serialNumber: Int
        /// Start of validity, UNIX seconds.
        package var notBefore: Int64
        /// End of validity, UNIX seconds.
        package var notAfter: Int64
        /// `basicConstraints CA:TRUE` and `keyUsage keyCertSign, cRLSign` when true; `digitalSignature` otherwise.
        package var isCertificateAuthority: Bool
        /// Extra non-critical extensions, each with an ASN.1 NULL value, the way Apple marks certificate roles
        /// (`1.2.840.113635.100.6.2.1` on its intermediates, `1.2.840.113635.100.6.11.1` on receipt signers).
        package var markerOIDs: [String]

        package init(
            commonName: String,
            organization: String? = nil,
            serialNumber: Int = 1,
            notBefore: Int64,
            notAfter: Int64,
            isCertificateAuthority: Bool,
            markerOIDs: [String] = []
        ) {
            self.commonName = commonName
            self.organization = organization
            self.serialNumber = serialNumber
            self.notBefore = notBefore
            self.notAfter = notAfter
            self.isCertificateAuthority = isCertificateAuthority
            self.markerOIDs = markerOIDs
        }

        /// A certificate for `subjectKey`'s public half, issued by `issuer` and signed with `issuerKey` (ECDSA
        /// with SHA-256). Without an issuer the certificate is self-signed and `issuerKey` must be `subjectKey`.
        package func sign(
            subjectKey: ES256Key,
            issuer: X509Certificate? = nil,
            issuerKey: ES256Key
        ) throws(CryptoError) -> X509Certificate {
            guard let raw = X509_new() else { throw .openSSL("X509_new") }
            let certificate = X509Handle(owning: raw)
            let pointer = certificate.pointer
            guard X509_set_version(pointer, 2) == 1,  // 2 means v3, which extensions need
                ASN1_INTEGER_set(X509_get_serialNumber(pointer), serialNumber) == 1,
                ASN1_TIME_set(X509_getm_notBefore(pointer), time_t(notBefore)) != nil,
                ASN1_TIME_set(X509_getm_notAfter(pointer), time_t(notAfter)) != nil
            else { throw .openSSL("X509_set") }
            try setSubject(pointer)
            if let issuer {
                let issuerHandle = try X509Handle(der: issuer.der)
                try link(pointer, to: issuerHandle.pointer)
            } else {
                try link(pointer, to: pointer)
            }
            // The keys travel as PEM into objects of this call alone, so no key's lock is held across OpenSSL
            // calls on the certificate (a root's subject and issuer key are one object).
            let subjectPublicKey = try PEMKeyHandle(pem: try subjectKey.publicKeyPEM(), isPublic: true)
            guard X509_set_pubkey(pointer, subjectPublicKey.pointer) == 1 else { throw .openSSL("X509_set_pubkey") }
            try addExtensions(pointer, issuer: pointer)
            let signingKey = try PEMKeyHandle(pem: try issuerKey.privateKeyPEM(), isPublic: false)
            guard X509_sign(pointer, signingKey.pointer, EVP_sha256()) > 0 else { throw .openSSL("X509_sign") }
            guard let der = X509Handle.encode(pointer) else { throw .openSSL("i2d_X509") }
            return try X509Certificate(der: der)
        }

        /// Names the issuer. Extensions that refer to the issuer (authority key id) are not minted, so the
        /// issuer's name is all the link needs.
        private func link(_ certificate: OpaquePointer, to issuer: OpaquePointer) throws(CryptoError) {
            guard X509_set_issuer_name(certificate, X509_get_subject_name(issuer)) == 1 else {
                throw .openSSL("X509_set_issuer_name")
            }
        }

        private func setSubject(_ certificate: OpaquePointer) throws(CryptoError) {
            guard let name = X509_NAME_new() else { throw .openSSL("X509_NAME_new") }
            defer { X509_NAME_free(name) }
            var entries = [("CN", commonName)]
            if let organization { entries.insert(("O", organization), at: 0) }
            for (field, value) in entries {
                let bytes = Array(value.utf8)
                guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1
                else { throw .openSSL("X509_NAME_add_entry_by_txt") }
            }
            // The certificate keeps a copy of the name.
            guard X509_set_subject_name(certificate, name) == 1 else { throw .openSSL("X509_set_subject_name") }
        }

        private func addExtensions(_ certificate: OpaquePointer, issuer: OpaquePointer) throws(CryptoError) {
            var context = X509V3_CTX()
            X509V3_set_ctx(&context, issuer, certificate, nil, nil, 0)
            var standard: [(Int32, String)] = [
                (NID_subject_key_identifier, "hash")
            ]
            if isCertificateAuthority {
                standard += [
                    (NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
                ]
            } else {
                standard += [
                    (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
                ]
            }
            for (nid, value) in standard {
                guard let ext = X509V3_EXT_nconf_nid(nil, &context, nid, value) else {
                    throw .openSSL("X509V3_EXT_nconf_nid")
                }
                defer { X509_EXTENSION_free(ext) }
                // X509_add_ext copies the extension.
                guard X509_add_ext(certificate, ext, -1) == 1 else { throw .openSSL("X509_add_ext") }
            }
            for oid in markerOIDs { try addMarker(oid, to: certificate) }
        }

        private func addMarker(_ oid: String, to certificate: OpaquePointer) throws(CryptoError) {
            guard let object = OBJ_txt2obj(oid, 1) else { throw .openSSL("OBJ_txt2obj") }
            defer { ASN1_OBJECT_free(object) }
            guard let value = ASN1_OCTET_STRING_new() else { throw .openSSL("ASN1_OCTET_STRING_new") }
            defer { ASN1_OCTET_STRING_free(value) }
            let null: [UInt8] = [0x05, 0x00]  // DER of ASN.1 NULL
            guard ASN1_OCTET_STRING_set(value, null, Int32(null.count)) == 1,
                let ext = X509_EXTENSION_create_by_OBJ(nil, object, 0, value)
            else { throw .openSSL("X509_EXTENSION_create_by_OBJ") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { throw .openSSL("X509_add_ext") }
        }
    }
}

/// An EVP_PKEY read from PEM for one minting call, freed with the handle.
private struct PEMKeyHandle: ~Copyable {
    let pointer: OpaquePointer

    init(pem: String, isPublic: Bool) throws(CryptoError) {
        let bytes = Array(pem.utf8)
        let loaded: OpaquePointer? = bytes.withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return isPublic ? PEM_read_bio_PUBKEY(bio, nil, nil, nil) : PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let loaded else { throw .openSSL("PEM_read_bio") }
        pointer = loaded
    }

    deinit { EVP_PKEY_free(pointer) }
}
