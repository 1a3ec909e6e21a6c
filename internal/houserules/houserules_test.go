package houserules

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goFiles returns every Go file of the repository, relative to its root.
func goFiles(t *testing.T) (root string, files []string) {
	root = filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, _ := filepath.Rel(root, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return root, files
}

func imports(t *testing.T, root, file string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		out = append(out, p)
	}
	return out
}

func TestParserLibraryOnlyInParser(t *testing.T) {
	root, files := goFiles(t)
	for _, f := range files {
		if strings.HasPrefix(f, "parser/") {
			continue
		}
		for _, im := range imports(t, root, f) {
			if strings.HasPrefix(im, "github.com/pingcap/") {
				t.Errorf("%s imports %s: only parser/ may use the SQL parser library", f, im)
			}
		}
	}
}

func TestKafkaLibrariesOnlyInKafka(t *testing.T) {
	root, files := goFiles(t)
	for _, f := range files {
		if strings.HasPrefix(f, "kafka/") || strings.HasPrefix(f, "bench/") || strings.HasPrefix(f, "internal/kafkatest/") || strings.HasSuffix(f, "_test.go") {
			continue
		}
		for _, im := range imports(t, root, f) {
			if strings.HasPrefix(im, "github.com/twmb/franz-go") || strings.HasPrefix(im, "github.com/IBM/sarama") {
				t.Errorf("%s imports %s: only kafka/ may use a Kafka client library", f, im)
			}
		}
	}
}

func TestTestsDoNotSleep(t *testing.T) {
	root, files := goFiles(t)
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") || f == "internal/houserules/houserules_test.go" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "time."+"Sleep(") {
			t.Errorf("%s sleeps (time."+"Sleep): wait on a flush or barrier hook instead", f)
		}
	}
}

func TestEveryPackageHasDocGo(t *testing.T) {
	root, files := goFiles(t)
	dirs := map[string]bool{}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			dirs[filepath.Dir(f)] = true
		}
	}
	for d := range dirs {
		if d == "." {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, d, "doc.go")); err != nil {
			t.Errorf("package %s has no doc.go saying what it owns", d)
		}
	}
}
