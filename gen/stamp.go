package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/opgen-sdk/opgen/internal/osenv"
)

// stamp makes a run that would change nothing cheap: it records a hash of
// every input of a run (the Go files of the selected packages, go.mod and
// go.sum, the opgen build, the options, the compatibility gate's baseline)
// and of every file it generated.
// When both are unchanged, the run is skipped. Stamps live in the user
// cache directory, never in the project, so they cannot make a checkout
// dirty; deleting them only costs one full run.
//
// A file whose size and modification time are those the stamp recorded is
// not read again: its recorded sum stands, as make trusts a time stamp. A
// no-op over 200 kinds then stats 2,700 files instead of hashing 21 MB.
type stamp struct {
	file    string
	project *Project
	gens    []string
	prev    stampData
	// stats are the files hashed or trusted by this run, for Save.
	stats map[string]fileStat
	// verified are the packages of other modules go.mod was found to
	// provide (see requireImports) while go.mod and go.sum were modules,
	// for Save.
	verified []string
	modules  string
	// raw is the stamp's file until load decodes it.
	raw []byte
	// dirs are the directories the walk of Save read, for Save.
	dirs map[string]dirList
	// hashed counts the files stat read because the stamp's record of
	// them was missing or stale.
	hashed atomic.Int64
}

type stampData struct {
	Inputs   string
	Outputs  map[string]string
	Stats    map[string]fileStat
	Verified []string
	Modules  string
	Dirs     map[string]dirList // written by marshal; unmarshal leaves it to stampDirs
}

// fileStat is what identifies a file's content without reading it.
type fileStat struct {
	Size int64
	Mod  int64 // modification time, Unix nanoseconds
	Sum  string
}

// stampFormat heads a stamp file. A stamp is lines of tab-separated
// fields, read without a JSON decoder: over 200 kinds it holds about
// 5,600 entries, which encoding/json took 15 to 25 ms to decode, a third
// of a no-op run.
const stampFormat = "opgen-stamp 3"

// marshal writes d as a stamp file; ok is false when a path holds a tab
// or a newline (the run is then not stamped).
func (d *stampData) marshal() (out []byte, ok bool) {
	var b strings.Builder
	line := func(fields ...string) {
		for i, f := range fields {
			if strings.ContainsAny(f, "\t\n") {
				ok = false
			}
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(f)
		}
		b.WriteByte('\n')
	}
	ok = true
	line(stampFormat)
	// The directories come first: Run reads them alone (stampDirs).
	for _, path := range slices.Sorted(maps.Keys(d.Dirs)) {
		dl := d.Dirs[path]
		sources, subdirs, module := marshalDirList(dl)
		line("d", path, strconv.FormatInt(dl.Mod, 10), sources, subdirs, module)
	}
	line("i", d.Inputs)
	line("m", d.Modules)
	for _, v := range d.Verified {
		line("v", v)
	}
	for _, path := range slices.Sorted(maps.Keys(d.Outputs)) {
		line("o", path, d.Outputs[path])
	}
	for _, path := range slices.Sorted(maps.Keys(d.Stats)) {
		st := d.Stats[path]
		line("s", path, strconv.FormatInt(st.Size, 10), strconv.FormatInt(st.Mod, 10), st.Sum)
	}
	return []byte(b.String()), ok
}

// unmarshal reads a stamp file into d, all but its directories (stampDirs
// reads those, for the walk); it reports false for anything else (a stamp
// of an older opgen), which costs one full run.
func (d *stampData) unmarshal(data []byte) bool {
	*d = stampData{}
	head, rest, _ := strings.Cut(string(data), "\n")
	if head != stampFormat {
		return false
	}
	// Sized once: over 200 kinds the maps hold about 2,800 entries each,
	// and growing them was a third of the read.
	n := strings.Count(rest, "\n") / 2
	*d = stampData{Outputs: make(map[string]string, n), Stats: make(map[string]fileStat, n)}
	var f [6]string
	for line := range strings.Lines(rest) {
		fields := f[:0]
		for s := strings.TrimSuffix(line, "\n"); ; {
			field, more, ok := strings.Cut(s, "\t")
			if len(fields) == len(f) {
				fields = nil // too many fields
				break
			}
			fields = append(fields, field)
			if !ok {
				break
			}
			s = more
		}
		switch {
		case len(fields) == 2 && fields[0] == "i":
			d.Inputs = fields[1]
		case len(fields) == 2 && fields[0] == "m":
			d.Modules = fields[1]
		case len(fields) == 2 && fields[0] == "v":
			d.Verified = append(d.Verified, fields[1])
		case len(fields) == 3 && fields[0] == "o":
			d.Outputs[fields[1]] = fields[2]
		case len(fields) == 5 && fields[0] == "s":
			size, err1 := strconv.ParseInt(fields[2], 10, 64)
			mod, err2 := strconv.ParseInt(fields[3], 10, 64)
			if err1 != nil || err2 != nil {
				*d = stampData{}
				return false
			}
			d.Stats[fields[1]] = fileStat{Size: size, Mod: mod, Sum: fields[4]}
		case len(fields) == 6 && fields[0] == "d":
			// Read by stampDirs while the project is walked.
		default:
			*d = stampData{}
			return false
		}
	}
	return true
}

func newStamp(p *Project, generators []string) *stamp {
	s := openStamp(&p.Options, generators)
	s.load()
	s.project = p
	return s
}

// openStamp reads the file of the stamp of a run of generators with o
// (defaulted), for load to decode; the stamp's project is for the caller
// to set before it checks the inputs or saves.
func openStamp(o *Options, generators []string) *stamp {
	s := &stamp{gens: generators, stats: map[string]fileStat{}}
	dir := o.StampDir
	if dir == "-" {
		return s
	}
	if dir == "" {
		var err error
		if dir, err = osenv.CacheDir("stamps"); err != nil {
			return s
		}
	}
	key := sha256.Sum256([]byte(o.Root + "\x00" + strings.Join(o.Patterns, "\x00") + "\x00" + strings.Join(generators, ",")))
	s.file = filepath.Join(dir, hex.EncodeToString(key[:12])+".stamp")
	s.raw, _ = os.ReadFile(s.file)
	return s
}

// load decodes the stamp openStamp read.
func (s *stamp) load() {
	if s.raw != nil {
		s.prev.unmarshal(s.raw)
		s.raw = nil
	}
}

// UpToDate reports whether the inputs and the generated files are what
// the last successful run saw and wrote.
func (s *stamp) UpToDate() bool {
	return s.outputsUnchanged() && s.inputsUnchanged()
}

// inputsUnchanged reports whether the inputs are what the last successful
// run saw.
func (s *stamp) inputsUnchanged() bool {
	if s.file == "" || s.prev.Inputs == "" {
		return false
	}
	inputs, err := s.inputs(s.prev.Outputs, false)
	return err == nil && inputs == s.prev.Inputs
}

// statWorkers stat the generated files at once: over 200 kinds they are
// 2,700 files, and one stat after the other was a third of a no-op run.
const statWorkers = 8

// outputsUnchanged reports whether every file the last run generated
// still has the content it wrote.
func (s *stamp) outputsUnchanged() bool {
	if s.file == "" || s.prev.Inputs == "" {
		return false
	}
	paths := slices.Collect(maps.Keys(s.prev.Outputs))
	stats := make([]fileStat, len(paths))
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := range min(statWorkers, len(paths)) {
		wg.Go(func() {
			for i := w; i < len(paths) && !failed.Load(); i += statWorkers {
				st, err := s.stat(paths[i])
				if err != nil || st.Sum != s.prev.Outputs[paths[i]] {
					failed.Store(true)
					return
				}
				stats[i] = st
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return false
	}
	for i, path := range paths {
		s.stats[path] = stats[i]
	}
	return true
}

// Save records the inputs and the outputs of a successful run.
func (s *stamp) Save(outputs map[string][]byte) {
	if s.file == "" {
		return
	}
	data := stampData{Outputs: map[string]string{}}
	for path, content := range outputs {
		sum := sha256.Sum256(content)
		data.Outputs[path] = hex.EncodeToString(sum[:])
		if info, err := os.Stat(path); err == nil && info.Size() == int64(len(content)) {
			s.stats[path] = fileStat{Size: info.Size(), Mod: info.ModTime().UnixNano(), Sum: data.Outputs[path]}
		}
	}
	inputs, err := s.inputs(data.Outputs, true)
	if err != nil {
		return
	}
	data.Inputs = inputs
	data.Stats = s.stats
	data.Verified, data.Modules, data.Dirs = s.verified, s.modules, s.dirs
	out, ok := data.marshal()
	if !ok {
		return
	}
	if os.MkdirAll(filepath.Dir(s.file), 0o755) == nil {
		_ = osenv.WriteFileAtomic(s.file, out, 0o644)
	}
}

// refresh records again, for a run that found nothing changed, what it
// had to read because the stamp did not spare it: the directories walk
// read and files whose time changed and content did not. The run that
// generated walks the project right after writing, so the directories it
// wrote into last changed within racyDir and are not recorded; without
// this, every later no-op read them again (over 200 kinds, the 140
// directories of the listers and informers). Once recorded, the stamp is
// not written again.
func (s *stamp) refresh(walk *lister) {
	if s.file == "" || (walk.read == 0 && s.hashed.Load() == 0) {
		return
	}
	data := s.prev
	data.Stats, data.Dirs = s.stats, walk.seen
	if out, ok := data.marshal(); ok {
		_ = osenv.WriteFileAtomic(s.file, out, 0o644)
	}
}

// inputs hashes everything a run depends on, except the generated files;
// fresh reads the packages' directories again rather than trusting what
// the run found at its start.
func (s *stamp) inputs(generated map[string]string, fresh bool) (string, error) {
	h := sha256.New()
	p := s.project
	fmt.Fprintf(h, "%q %q %q %q %q %q %q %q %t %t %t %s\n", p.Version, s.gens, p.Patterns, p.Name, p.ClientDir, p.ControllerDir, p.CRDDir, p.RBACDir, p.AllowDangerousTypes, p.StrictMarkers, p.StrictConversion, maxDescLen(p.CRDMaxDescLen))
	fmt.Fprintf(h, "%t %t %q %q %+v %q %q %t %q\n", p.GenerateEmbeddedObjectMeta, p.IgnoreUnexportedFields, p.HeaderFile, p.HeaderYear, p.Clients, p.ConversionExtraPeerDirs, p.DefaulterExtraPeerDirs, p.StrictTypes, p.CRDPackages)
	fmt.Fprintf(h, "%q %q %t %t\n", p.ConversionPackages, p.DefaulterPackages, p.IgnoreK8sTags, p.HeaderGoOnly)
	if p.HeaderFile != "" {
		if err := s.hashFile(h, p.Abs(p.HeaderFile)); err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	if exe, err := os.Executable(); err == nil {
		if info, err := os.Stat(exe); err == nil {
			// go run caches binaries under content-addressed paths, so
			// path, size and time identify the build.
			fmt.Fprintf(h, "%s %d %d\n", exe, info.Size(), info.ModTime().UnixNano())
		}
	}
	if err := s.hashBaseline(h); err != nil {
		return "", err
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if err := s.hashFile(h, filepath.Join(p.ModuleDir, f)); err != nil && !os.IsNotExist(err) {
			return "", err
		}
	}
	// The packages as the run found them when it started; after a run,
	// found again (it may have written some).
	dirs, sources := p.Dirs, p.sources
	if fresh || sources == nil {
		l := &lister{seen: map[string]dirList{}}
		var err error
		if dirs, sources, err = walkPatterns(p.Root, p.Patterns, l); err != nil {
			return "", err
		}
		if fresh {
			s.dirs = l.seen
		}
	}
	for _, dir := range dirs {
		for _, path := range sources[dir] {
			if _, gen := generated[path]; gen {
				continue
			}
			if err := s.hashFile(h, path); err != nil {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// maxDescLen spells the description cap for the stamp.
func maxDescLen(n *int) string {
	if n == nil {
		return "no cap"
	}
	return fmt.Sprint(*n)
}

// hashFile adds path and the sum of its content to h.
func (s *stamp) hashFile(h hash.Hash, path string) error {
	sum, err := s.sum(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%s %s\n", path, sum)
	return nil
}

// sum returns the SHA-256 of path's content (stat), and records it for
// Save.
func (s *stamp) sum(path string) (string, error) {
	st, err := s.stat(path)
	if err != nil {
		return "", err
	}
	s.stats[path] = st
	return st.Sum, nil
}

// stat returns what identifies path's content: its SHA-256 is the
// recorded one when the file's size and modification time are those
// recorded, else read. It only reads s, so it is safe to call at once
// from several goroutines.
func (s *stamp) stat(path string) (fileStat, error) {
	info, err := os.Stat(path)
	if err != nil {
		return fileStat{}, err
	}
	st := fileStat{Size: info.Size(), Mod: info.ModTime().UnixNano()}
	if prev, ok := s.prev.Stats[path]; ok && prev.Size == st.Size && prev.Mod == st.Mod {
		return prev, nil
	}
	if st.Sum, err = fileSum(path); err != nil {
		return fileStat{}, err
	}
	s.hashed.Add(1)
	return st, nil
}

func fileSum(path string) (string, error) {
	h := sha256.New()
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
