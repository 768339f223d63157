/// Characters a reader does not see that change what they read: the C0 and C1 controls, DEL, the line and
/// paragraph separators, and the bidirectional marks, overrides and isolates (U+202E shows `moc.evil` as
/// `live.com`). Text from outside is shown with them escaped (a terminal) or kept without them (a campaign value).
public enum HiddenCharacters {
    public static func contains(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
            true
        default: false
        }
    }
}
