package shell

import (
	"context"
	"io"
	"testing"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/types"
)

// formatsEngine answers a SHOW and a push query, with a message first.
func formatsEngine(t *testing.T) *scriptedEngine {
	return &scriptedEngine{t: t, answers: map[string]func(*api.Session) ([]api.Result, error){
		"CREATE STREAM s;": msg("CREATE STREAM s;", "Stream created"),
		"SHOW STREAMS;": func(*api.Session) ([]api.Result, error) {
			return entity(sourcesOf(api.SourceStream, api.SourceInfo{Name: "S", Topic: "s, with a comma", KeyFormat: "KAFKA", ValueFormat: "JSON"}))(nil)
		},
		"SELECT * FROM s EMIT CHANGES LIMIT 2;": func(*api.Session) ([]api.Result, error) {
			rows := [][]any{{"a\"b", int64(3), 1.5}, {"c", nil, nil}}
			i := 0
			st := api.NewStream("transient_1", api.Columns([]types.Column{
				{Name: "NAME", Type: types.StringType}, {Name: "N", Type: types.BigintType}, {Name: "D", Type: types.DoubleType},
			}, 0), func(context.Context) ([]any, error) {
				if i == len(rows) {
					return nil, io.EOF
				}
				i++
				return rows[i-1], nil
			}, func() {}, func() api.EndReason { return api.EndLimit })
			return []api.Result{{Kind: api.ResultRows, Stream: st}}, nil
		},
	}}
}

func TestOutputFormats(t *testing.T) {
	const script = "CREATE STREAM s;\nSHOW STREAMS;\nSELECT * FROM s EMIT CHANGES LIMIT 2;\n"
	for _, tc := range []struct {
		name, output  string
		vertical      Vertical
		width         int
		stdout, stder string
	}{{
		name: "json", output: "OUTPUT JSON;\n",
		stdout: `{"Stream Name":"S","Kafka Topic":"s, with a comma","Key Format":"KAFKA","Value Format":"JSON","Windowed":false}
{"NAME":"a\"b","N":3,"D":1.5}
{"NAME":"c","N":null,"D":null}
`,
		stder: "Stream created\nLimit Reached\n",
	}, {
		name: "csv", output: "output csv;\n",
		stdout: `Stream Name,Kafka Topic,Key Format,Value Format,Windowed
S,"s, with a comma",KAFKA,JSON,false
NAME,N,D
"a""b",3,1.5
c,,
`,
		stder: "Stream created\nLimit Reached\n",
	}, {
		name: "vertical", vertical: VerticalOn,
		stdout: `Stream created
-[ RECORD 1 ]+----------------
Stream Name  | S
Kafka Topic  | s, with a comma
Key Format   | KAFKA
Value Format | JSON
Windowed     | false
-[ RECORD 1 ]+----
NAME | a"b
N    | 3
D    | 1.5
-[ RECORD 2 ]+-----
NAME | c
N    | null
D    | null
Limit Reached
`,
	}, {
		// The SHOW table is 70 wide: too wide for 30 columns, so it goes
		// vertical; the push query's first row fits.
		name: "auto", width: 30,
		stdout: `Stream created
-[ RECORD 1 ]+---------------
Stream Name  | S
Kafka Topic  | s, with a comm
             | a
Key Format   | KAFKA
Value Format | JSON
Windowed     | false
+------+------+------+
| NAME | N    | D    |
+------+------+------+
| a"b  | 3    | 1.5  |
| c    | null | null |
+------+------+------+
Limit Reached
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			sh, out, errOut := newTestShell(t, formatsEngine(t))
			sh.Vertical, sh.TermWidth = tc.vertical, tc.width
			if err := sh.Run(context.Background(), "", tc.output+script); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.stdout || errOut.String() != tc.stder {
				t.Errorf("stdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", out, tc.stdout, errOut, tc.stder)
			}
		})
	}
}

func TestOutputCommand(t *testing.T) {
	sh, out, errOut := newTestShell(t, formatsEngine(t))
	if err := sh.Run(context.Background(), "", "OUTPUT JSON; OUTPUT;"); err != nil || sh.Format != FormatJSON || out.String() != "Output format: JSON\n" {
		t.Errorf("OUTPUT JSON = %v, format %v, stdout %q", err, sh.Format, out)
	}
	err := sh.Run(context.Background(), "", "OUTPUT XML;")
	const want = "Error: line 1:8: unknown output format XML: write OUTPUT TABULAR, OUTPUT JSON or OUTPUT CSV\nOUTPUT XML;\n       ^\n"
	if err == nil || errOut.String() != want {
		t.Errorf("OUTPUT XML = %v, stderr %q, want %q", err, errOut, want)
	}
}

func TestBackslashCommands(t *testing.T) {
	sh, out, errOut := newTestShell(t, formatsEngine(t))
	for _, line := range []string{`\x`, `\x`, `\x auto`, `\o csv`, `\o`, `\x sideways`, `\q`} {
		if !sh.Command(line) {
			t.Errorf("Command(%q) = false", line)
		}
	}
	if sh.Command("SELECT 1;") {
		t.Error("Command took a statement")
	}
	// Once the output is CSV, such notes go to stderr.
	const wantOut = "Vertical output is on.\nVertical output is off.\nVertical output is auto.\n"
	const wantErr = "Output format: CSV\nOutput format: CSV\nError: \\x takes on, off or auto, not \"sideways\"\nError: unknown command \\q; type help for the shell's commands\n"
	if out.String() != wantOut || errOut.String() != wantErr {
		t.Errorf("stdout %q, want %q\nstderr %q, want %q", out, wantOut, errOut, wantErr)
	}
}

func TestBackslashCommandsInScripts(t *testing.T) {
	sh, out, errOut := newTestShell(t, formatsEngine(t))
	if err := sh.Run(context.Background(), "s.sql", "\\o json\nSHOW STREAMS;\n"); err != nil {
		t.Fatal(err)
	}
	if want := `{"Stream Name":"S","Kafka Topic":"s, with a comma","Key Format":"KAFKA","Value Format":"JSON","Windowed":false}` + "\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	errOut.Reset()
	err := sh.Run(context.Background(), "s.sql", "SHOW STREAMS;\n  \\x sideways\nSHOW STREAMS;\n")
	const want = "Error: s.sql:2:3: \\x takes on, off or auto, not \"sideways\"\n\\x sideways\n^\n"
	if err == nil || errOut.String() != want {
		t.Errorf("Run = %v, stderr %q, want %q", err, errOut, want)
	}
}
