// Command imagebuild writes a one-layer container image as a docker-archive tarball, which
// `ctr -n k8s.io images import` reads. The image layout (manifest, config, layer digests) is
// go-containerregistry's; this program only says which files go in the layer and what the config
// holds. Nothing is pulled or pushed: the base is the empty image.
//
//	imagebuild -ref hardwire.local/pause:3.10.2 -out pause.tar -entrypoint /pause -add /pause=$BIN/pause
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	var adds, links, entrypoint, cmd, env list
	ref := flag.String("ref", "", "image reference, e.g. hardwire.local/pause:3.10.2")
	out := flag.String("out", "", "docker-archive tarball to write")
	flag.Var(&adds, "add", "PATH_IN_IMAGE=LOCAL_FILE, mode kept (repeatable)")
	flag.Var(&links, "link", "PATH_IN_IMAGE=TARGET symlink (repeatable)")
	flag.Var(&entrypoint, "entrypoint", "entrypoint argument (repeatable, in order)")
	flag.Var(&cmd, "cmd", "cmd argument (repeatable, in order)")
	flag.Var(&env, "env", "KEY=VALUE (repeatable)")
	user := flag.String("user", "", "config user, e.g. 65535:65535")
	arch := flag.String("arch", runtime.GOARCH, "the image's architecture: that of the binaries it holds")
	flag.Parse()
	if err := build(*ref, *out, adds, links, entrypoint, cmd, env, *user, *arch); err != nil {
		fmt.Fprintf(os.Stderr, "imagebuild: %v\n", err)
		os.Exit(1)
	}
}

// layer is one tar: every file and link given, parent directories first, all owned by root, mtime 0.
func layer(adds, links []string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	mkdirs := func(p string) error {
		parts := strings.Split(strings.Trim(p, "/"), "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/") + "/"
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				return err
			}
		}
		return nil
	}
	sorted := func(xs []string) []string { s := append([]string(nil), xs...); sort.Strings(s); return s }
	for _, a := range sorted(adds) {
		dst, src, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("-add %q: want PATH_IN_IMAGE=LOCAL_FILE", a)
		}
		st, err := os.Stat(src)
		if err != nil {
			return nil, err
		}
		if err := mkdirs(dst); err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(dst, "/"), Mode: int64(st.Mode().Perm()), Size: st.Size(), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		_, err = io.Copy(tw, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	for _, l := range sorted(links) {
		dst, target, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("-link %q: want PATH_IN_IMAGE=TARGET", l)
		}
		if err := mkdirs(dst); err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: strings.TrimPrefix(dst, "/"), Linkname: target, Mode: 0o777, ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func build(ref, out string, adds, links, entrypoint, cmd, env []string, user, arch string) error {
	if ref == "" || out == "" {
		return fmt.Errorf("-ref and -out are required")
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	data, err := layer(adds, links)
	if err != nil {
		return err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config = v1.Config{Entrypoint: entrypoint, Cmd: cmd, Env: env, User: user}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	return tarball.WriteToFile(out, tag, img)
}
