/// Text that goes into a request as it is (a URL libcurl is given, a key in a header): visible ASCII only, no
/// space. libcurl takes a URL's text as it is, where Foundation's `URL` quietly percent-encodes a space or a
/// control character in a path, and a key with a line break in it breaks its header: a value pasted with a
/// trailing space passed as valid, and every call with it then failed.
public enum VisibleASCII {
    public static func holds(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
