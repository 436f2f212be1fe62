package crawler

import "testing"

// An XHTML page read as one keeps the encoding it came with: the declared
// charset, else its XML declaration's (RV8 F6).
func TestPageTypeKeepsTheEncoding(t *testing.T) {
	t.Parallel()
	const root = `<html xmlns="http://www.w3.org/1999/xhtml">`
	for _, c := range []struct{ declared, head, want string }{
		{"text/xml; charset=Shift_JIS", `<?xml version="1.0"?>` + root, "application/xhtml+xml; charset=Shift_JIS"},
		{"application/xml;charset=\"euc-kr\"", root, "application/xhtml+xml; charset=euc-kr"},
		{"text/xml", `<?xml version="1.0" encoding="KOI8-R"?>` + root, "application/xhtml+xml; charset=KOI8-R"},
		{"text/xml", "<?xml version='1.0' encoding='windows-1251' ?>\n" + root, "application/xhtml+xml; charset=windows-1251"},
		{"text/xml", "\xEF\xBB\xBF<?xml version='1.0' encoding='windows-1251' ?>" + root, "application/xhtml+xml"}, // the BOM says UTF-8
		{"", `<?xml version="1.0"?>` + root, "application/xhtml+xml"},
		{"text/xml; charset=utf-8", `<?xml version="1.0" encoding="iso-8859-1"?>` + root, "application/xhtml+xml; charset=utf-8"},
		{"text/xml", `<?xml version="1.0"?><feed/>`, "text/xml"},
		{"text/html; charset=Shift_JIS", "<p>", "text/html; charset=Shift_JIS"},
	} {
		if got := pageType(c.declared, []byte(c.head)); got != c.want {
			t.Errorf("pageType(%q, %q) = %q, want %q", c.declared, c.head, got, c.want)
		}
	}
}
