package expr

import (
	"encoding/json"
	"testing"
)

// TestAppendStringAsJSON checks that strings are quoted byte for byte as
// json.Marshal quotes them: state keys hold them.
func TestAppendStringAsJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", `q"uote\back`, "<a href='x'>&amp;</a>", "tab\tnew\nline\x01\x1f\b\f\r", "é ü 日本 \U0001F600",
		"\u2028\u2029", "bad \xff\xfe utf8 \xe2\x82", "https://www.nexmark.com/Google/item.htm?query=1&channel_id=5", "\x7f~",
	} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendString([]byte("prefix"), s)
		if err != nil || string(got) != "prefix"+string(want) {
			t.Errorf("%q: got %s (%v), want %s", s, got, err, want)
		}
	}
}
