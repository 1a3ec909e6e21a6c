package eval_test

import "testing"

func TestURLFuncs(t *testing.T) {
	runEvalCases(t, []evalCase{
		{text: "URL_ENCODE_PARAM('?foo $bar*~')", want: "%3Ffoo+%24bar*%7E"},
		{text: "URL_ENCODE_PARAM('é')", want: "%C3%A9"},
		{text: "URL_DECODE_PARAM('%3Ffoo+%24bar')", want: "?foo $bar"},
		{text: "URL_DECODE_PARAM('%C3%A9')", want: "é"},
		{text: "URL_DECODE_PARAM('bad%2')", want: nil, wantErr: true},

		{text: "URL_EXTRACT_FRAGMENT('http://www.test.com/?query#frag%20ment')", want: "frag ment"},
		{text: "URL_EXTRACT_FRAGMENT('http://www.nofragment.com')", want: nil},
		{text: "URL_EXTRACT_HOST('http://test@confluent.io:8080')", want: "confluent.io"},
		{text: "URL_EXTRACT_HOST('http://under_score.io')", want: nil},
		{text: "URL_EXTRACT_HOST('www.confluent.io')", want: nil},
		{text: "URL_EXTRACT_PARAMETER('http://www.test.com/?one=a&two=b&three', 'two')", want: "b"},
		{text: "URL_EXTRACT_PARAMETER('http://www.test.com/?one=a&two=b&three', 'three')", want: ""},
		{text: "URL_EXTRACT_PARAMETER('http://www.test.com/?one=a', 'four')", want: nil},
		{text: "URL_EXTRACT_PARAMETER('http://www.test.com/?two=url%20encoded', 'two')", want: "url encoded"},
		{text: "URL_EXTRACT_PARAMETER('http://www.test.com/', 'one')", want: nil},
		{text: "URL_EXTRACT_PATH('http://www.test.com?query#fragment')", want: ""},
		{text: "URL_EXTRACT_PATH('http://test@confluent.io:8080/nested/path?query&jobs')", want: "/nested/path"},
		{text: "URL_EXTRACT_PATH('www.confluent.io/a')", want: "www.confluent.io/a"},
		{text: "URL_EXTRACT_PATH('mailto:someone@example.com')", want: nil},
		{text: "URL_EXTRACT_PORT('http://test@confluent.io')", want: nil},
		{text: "URL_EXTRACT_PORT('http://test@confluent.io:8080/nested')", want: int32(8080)},
		{text: "URL_EXTRACT_PORT('http://[::1]:9092/')", want: int32(9092)},
		{text: "URL_EXTRACT_PROTOCOL('https://test@confluent.io:8080/p')", want: "https"},
		{text: "URL_EXTRACT_PROTOCOL('www.confluent.io')", want: nil},
		{text: "URL_EXTRACT_QUERY('http://www.test.com/path?q1&q2')", want: "q1&q2"},
		{text: "URL_EXTRACT_QUERY('http://test@confluent.io:8080/path')", want: nil},
		{text: "URL_EXTRACT_QUERY('http://bad url.com/')", want: nil, wantErr: true},
		{text: "URL_EXTRACT_HOST('http://%zz')", want: nil, wantErr: true},
		{text: "URL_EXTRACT_HOST(S)", row: withCol(4, nil), want: nil},
	})
}
