package main

import (
	"fmt"
	goruntime "runtime"
	"strings"
)

func (s *suite) mdCodegen(b *strings.Builder) {
	if len(s.res.Codegen) == 0 {
		return
	}
	b.WriteString("## 8. Code generation\n\n")
	fmt.Fprintf(b, "`bench/codegen` (see its README): `opgen generate` against controller-gen v0.23.0 + code-generator v0.37.2 (applyconfiguration-gen, client-gen, lister-gen, informer-gen, one process each) on the generator's fixture types; %d runs, conventional and opgen alternating run by run; cold = a fresh GOCACHE each run.\n\n", s.cfg.codegenRuns)
	t := &table{}
	t.head("measurement", "conventional (s)", "opgen (s)", "speed-up (run by run)")
	for _, r := range [][3]string{
		{"cold (fresh GOCACHE)", "conventional cold", "opgen cold"},
		{"cold, conventional with CGO_ENABLED=0", "conventional cold, CGO_ENABLED=0", "opgen cold"},
		{"warm (regenerate all)", "conventional warm", "opgen warm (--force)"},
	} {
		c, o := s.res.Raw["codegen."+r[1]], s.res.Raw["codegen."+r[2]]
		sm, _ := summarize(ratios(c, o))
		t.row(r[0], rawCell(c, 1), rawCell(o, 1), fmt.Sprintf("%.1fx [%.1f–%.1f]", sm.med, sm.min, sm.max))
	}
	over, _ := summarize(s.codegenValues("overlist"))
	t.row("cold: the first `go list -deps` alone, opgen's floor", "–", rawCell(s.res.Raw["codegen.go list cold"], 1), fmt.Sprintf("opgen +%.2f s [%.2f–%.2f]", over.med, over.min, over.max))
	t.row("no-op, binary", "–", rawCell(s.res.Raw["codegen.opgen no-op (binary)"], 1), "")
	t.row("no-op, go run (as go:generate)", "–", rawCell(s.res.Raw["codegen.opgen no-op (go run)"], 1), "")
	b.WriteString(t.b.String())
	b.WriteString("\n")
	s.mdCodegenScale(b)
}

// mdCodegenScale writes the code generation benchmark on synthetic APIs.
func (s *suite) mdCodegenScale(b *strings.Builder) {
	sizes := s.codegenSizes()
	if len(sizes) == 0 || len(s.res.Raw[fmt.Sprintf("codegen.scale.%d.opgen cold.seconds", sizes[0])]) == 0 {
		return
	}
	fmt.Fprintf(b, "At scale: synthetic APIs of 5 kinds per group version (`go run ./codegen -kinds %s -n %d`), every kind with a spec and status of a dozen fields, no conversions; %d runs, the median [min–max]. Peak RSS is VmHWM of the generator processes (for the conventional chain, the largest of its five); opgen's no-op is its binary finding nothing changed. opgen sets a 400 MiB soft memory limit during a run (`GOMEMLIMIT` overrides).\n\n", s.cfg.codegenKinds, codegenScaleRuns, codegenScaleRuns)
	t := &table{}
	t.head("kinds", "measurement", "conventional (s)", "opgen (s)", "speed-up (run by run)", "conventional peak RSS (MiB)", "opgen peak RSS (MiB)")
	const mib = 1.0 / (1 << 20)
	for _, n := range sizes {
		raw := func(k string) []float64 { return s.res.Raw[fmt.Sprintf("codegen.scale.%d.%s", n, k)] }
		for _, m := range []string{"cold", "warm"} {
			sm, _ := summarize(s.codegenValues(fmt.Sprintf("scale.%d.%s", n, m)))
			t.row(fmt.Sprint(n), m, rawCell(raw("conventional "+m+".seconds"), 1), rawCell(raw("opgen "+m+".seconds"), 1),
				fmt.Sprintf("%.1fx [%.1f–%.1f]", sm.med, sm.min, sm.max), rawCell(raw("conventional "+m+".rssBytes"), mib), rawCell(raw("opgen "+m+".rssBytes"), mib))
		}
		t.row(fmt.Sprint(n), "no-op (binary)", "–", rawCell(raw("opgen no-op.seconds"), 1), "", "", rawCell(raw("opgen no-op.rssBytes"), mib))
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
}

func (s *suite) mdBinary(b *strings.Builder) {
	if !s.cfg.runs("binary") {
		return
	}
	b.WriteString("## 9. Binary and image\n\n")
	fmt.Fprintf(b, "The operators of the benchmark's kinds: the binary as the harness builds it (`go build`, no flags), and the image `opgen image` builds of each (static, `-trimpath -ldflags \"-s -w\"`, on opgen's minimal base, linux/%s): the bytes a node pulls (manifest, config, compressed layers) and the binary in it. Both go through the same image build, so what differs is the binary.\n\n", goruntime.GOARCH)
	t := &table{}
	t.head("measurement", "opgen (MB)", "controller-runtime (MB)", "opgen / cr")
	for _, r := range [][2]string{
		{"binary (go build)", "binary.bytes"},
		{"binary in the image (stripped)", "image.binary.bytes"},
		{"image, bytes pulled", "image.bytes"},
	} {
		o, c := s.res.get(r[1], opgen), s.res.get(r[1], cr)
		if len(o) == 0 || len(c) == 0 {
			t.row(r[0], "–", "–", "–")
			continue
		}
		t.row(r[0], fmt.Sprintf("%.2f", median(o)/1e6), fmt.Sprintf("%.2f", median(c)/1e6), fmt.Sprintf("%.3fx", median(o)/median(c)))
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
}

// mdTestkit writes the test kits' start: envtest, optest cold and warm.
func (s *suite) mdTestkit(b *strings.Builder) {
	if len(s.res.get("testkit.first.seconds", kitEnvtest)) == 0 {
		return
	}
	b.WriteString("## 10. Test kit start\n\n")
	fmt.Fprintf(b, "A test package of %d tests (each creates a namespace of its own, a ConfigMap in it, and reads it back), compiled once with `go test -c`, on the control-plane binaries already built. **envtest**: controller-runtime's `envtest.Environment` Start and Stop in TestMain, etcd and kube-apiserver from `KUBEBUILDER_ASSETS`. **optest**: `optest.New(optest.Options{}).Main(m)`; **cold** on a fresh shared-state directory (it starts the supervisor, etcd, kube-apiserver and the namespace controller), **warm** the next run on the same directory, joining that control plane, as the second and later packages of a `go test ./...` do. From the harness's clock before exec to the first test's body, and to the binary's exit; seconds, median [min–max] over %d rounds, the kits alternating; the ratio is taken round by round. Only the warm ratio is judged.\n\n", testkitTests, s.cfg.rounds)
	t := &table{}
	t.head("kit", "start to first test (s)", fmt.Sprintf("all %d tests (s)", testkitTests), "first test / envtest's", "all tests / envtest's")
	t.row(kitEnvtest, s.cell("testkit.first.seconds", kitEnvtest, 1), s.cell("testkit.total.seconds", kitEnvtest, 1), "–", "–")
	for _, v := range []string{kitCold, kitWarm} {
		t.row(v, s.cell("testkit.first.seconds", v, 1), s.cell("testkit.total.seconds", v, 1),
			ratioNum(s.res, "testkit.first.seconds", v, kitEnvtest), ratioNum(s.res, "testkit.total.seconds", v, kitEnvtest))
	}
	b.WriteString(t.b.String())
	b.WriteString("\n")
}
