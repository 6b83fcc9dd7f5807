package gen

import (
	"sigs.k8s.io/controller-tools/pkg/loader"

	"github.com/opgen-sdk/opgen/gen/markers"
)

// checkKubebuilderMarkers reports the +kubebuilder: markers of pkg that
// controller-tools does not know, or whose arguments do not parse, at
// their positions. It runs before the collector's errors are added, so
// that its message, with a suggestion, replaces the collector's about
// the same line.
func (b *apiBuilder) checkKubebuilderMarkers(pkg *loader.Package) {
	pkg.NeedSyntax()
	for _, file := range pkg.Syntax {
		for _, group := range file.Comments {
			for _, c := range group.List {
				text, ok := markerText(c.Text)
				if !ok {
					continue
				}
				if msg := markers.CheckKubebuilder(text, b.ctx.Collector.Registry); msg != "" {
					b.ctx.Errors.Add(b.ctx.Position(c.Pos()), "%s", msg)
				}
			}
		}
	}
}
