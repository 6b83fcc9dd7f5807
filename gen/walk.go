package gen

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// dirList is what the walk of the package patterns needs of a directory:
// the non-test Go files in it, the subdirectories it descends into and
// whether the directory is a module of its own (holds a go.mod). The
// stamp records it with the directory's modification time: while that
// time is unchanged, no entry was added to, removed from or renamed in the
// directory, so a no-op run stats the directory instead of reading it.
type dirList struct {
	Mod     int64 // modification time, Unix nanoseconds
	Sources []string
	Subdirs []string
	Module  bool
}

// lister lists directories for expandPatterns: from the record of the
// last run where a directory's modification time is the recorded one, or
// else by reading it; every directory it lists goes to seen but one
// changed within racyDir. read counts the directories it read and
// recorded: a record that would spare the next run reading them.
type lister struct {
	prev map[string]dirList
	seen map[string]dirList
	read int
}

func (l *lister) list(dir string) (dirList, error) {
	if prev, ok := l.prev[dir]; ok {
		if info, err := os.Stat(dir); err == nil && info.ModTime().UnixNano() == prev.Mod {
			l.seen[dir] = prev
			return prev, nil
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return dirList{}, err
	}
	defer f.Close()
	// The time is taken before the entries: an entry added while they
	// are read makes the recorded time stale, never the listing.
	info, err := f.Stat()
	if err != nil {
		return dirList{}, err
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return dirList{}, err
	}
	d := dirList{Mod: info.ModTime().UnixNano()}
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir() && !skipName(name):
			d.Subdirs = append(d.Subdirs, name)
		case !e.IsDir() && isSourceFile(name):
			d.Sources = append(d.Sources, name)
		case !e.IsDir() && name == "go.mod":
			d.Module = true
		}
	}
	slices.Sort(d.Sources)
	slices.Sort(d.Subdirs)
	// A directory changed just now may change again within the
	// granularity of its file system's times, keeping the time recorded
	// here: it is not recorded, and the next run reads it again.
	if time.Since(info.ModTime()) >= racyDir {
		l.seen[dir] = d
		l.read++
	}
	return d, nil
}

// racyDir is how recent a directory's modification time may be for the
// stamp to record the directory: file systems keep times at a granularity
// of a few milliseconds (a clock tick), and an entry added within the tick
// of the listing would keep its time.
const racyDir = 100 * time.Millisecond

// marshalDirList and unmarshalDirList spell a dirList's names for the
// stamp: a file name holds no slash.
func marshalDirList(d dirList) (sources, subdirs, module string) {
	module = "-"
	if d.Module {
		module = "m"
	}
	return strings.Join(d.Sources, "/"), strings.Join(d.Subdirs, "/"), module
}

func unmarshalDirList(mod int64, sources, subdirs, module string) dirList {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, "/")
	}
	return dirList{Mod: mod, Sources: split(sources), Subdirs: split(subdirs), Module: module == "m"}
}

// stampDirs decodes only the directories of a stamp's file (its "d"
// lines, which precede the files'), for the walk to start while the rest
// is decoded; nil when data is not a stamp of this format.
func stampDirs(data []byte) map[string]dirList {
	// Read as bytes: the stamp is about 1 MB over 200 kinds, and a copy
	// of it as a string costs as much as its directories.
	head, rest, _ := bytes.Cut(data, []byte("\n"))
	if string(head) != stampFormat {
		return nil
	}
	dirs := map[string]dirList{}
	for len(rest) > 0 && rest[0] == 'd' {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		path, dl, ok := parseDirLine(strings.Split(string(line), "\t"))
		if !ok {
			return nil
		}
		dirs[path] = dl
	}
	return dirs
}

// parseDirLine reads the fields of a stamp's "d" line: the directory, its
// modification time, sources, subdirectories and go.mod mark.
func parseDirLine(f []string) (path string, dl dirList, ok bool) {
	if len(f) != 6 || f[0] != "d" {
		return "", dirList{}, false
	}
	mod, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return "", dirList{}, false
	}
	return f[1], unmarshalDirList(mod, f[3], f[4], f[5]), true
}
