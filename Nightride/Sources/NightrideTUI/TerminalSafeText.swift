/// `text` with every character a terminal would act on instead of showing replaced by the
/// replacement character `�` (U+FFFD): the C0 controls (U+0000–U+001F, newlines and tabs
/// included), DEL (U+007F) and the C1 controls (U+0080–U+009F, among them the one-character
/// CSI and OSC introducers).
///
/// Why: names, places, addresses and error messages come from the server (or from what the user
/// typed) and are written into a frame as they are. An ESC in a passenger's name would start an
/// escape sequence, which can clear the screen, move the cursor, retitle the window or worse, and
/// a newline or tab would break the layout, which the render decides alone. One visible
/// placeholder per control keeps the frame's columns predictable (each control is one scalar and
/// becomes one) and shows that something was there.
func terminalSafe(_ text: String) -> String {
    // Almost every text is clean: no copy then.
    guard text.unicodeScalars.contains(where: isTerminalControl) else { return text }
    var safe = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        safe.append(isTerminalControl(scalar) ? "\u{FFFD}" : scalar)
    }
    return String(safe)
}

/// Whether a terminal interprets `scalar` rather than printing it.
private func isTerminalControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F: true
    default: false
    }
}
