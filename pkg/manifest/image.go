package manifest

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// An image may be named by digest (registry/name:tag@sha256:...), as
// `opgen image` prints it: the Deployment then runs exactly what was
// built, whatever the tag points to later.
var imageDigest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// validateImage checks the digest of an image named by one: a typo there
// would surface only as a Pod that cannot pull.
func (o *builder) validateImage() error {
	_, digest, ok := strings.Cut(o.Image, "@")
	if !ok || imageDigest.MatchString(digest) {
		return nil
	}
	return fmt.Errorf("manifest: image %q: %q is not a digest (sha256: and 64 hex digits): pass the reference opgen image printed", o.Image, digest)
}

// imageTag is the tag of image, "" without one: what follows the last
// colon of the name, less its digest.
func imageTag(image string) string {
	name, _, _ := strings.Cut(image, "@")
	i := strings.LastIndex(name, ":")
	if i < 0 || strings.Contains(name[i:], "/") {
		return ""
	}
	return name[i+1:]
}

// ServesWebhooks reports whether the operator whose `opgen generate`
// output is in configDir serves webhooks: admission webhooks
// (config/webhook/manifests.yaml) or the conversion of a CRD.
func ServesWebhooks(configDir string) (bool, error) {
	crds, err := readCRDs(filepath.Join(configDir, "crd"))
	if err != nil {
		return false, err
	}
	wh, err := readWebhooks(configDir, crds)
	return wh.used(), err
}
