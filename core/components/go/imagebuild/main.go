// Command imagebuild writes a one-layer container image as a docker-archive tarball, which
// `ctr -n k8s.io images import` reads. The image layout (manifest, config, layer digests) is
// go-containerregistry's; this program only says which files go in the layer and what the config
// holds. Nothing is pulled: the base is the empty image.
//
//	imagebuild -ref hardwire.local/pause:3.10.2 -out pause.tar -entrypoint /pause -add /pause=$BIN/pause
//
// With -push it writes a tarball it made into a registry instead, under one or more names, over
// HTTPS verified with -ca (go-containerregistry's remote.Write: a blob the registry already holds is
// not sent again, so a second push of the same tarball sends only its manifest):
//
//	imagebuild -push nginx.tar -registry 127.0.0.1:5000 -ca ca.crt -as library/nginx:latest
package main

import (
	"archive/tar"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	var adds, links, trees, entrypoint, cmd, env, as list
	ref := flag.String("ref", "", "image reference, e.g. hardwire.local/pause:3.10.2")
	out := flag.String("out", "", "docker-archive tarball to write")
	flag.Var(&adds, "add", "PATH_IN_IMAGE=LOCAL_FILE, mode kept (repeatable)")
	flag.Var(&links, "link", "PATH_IN_IMAGE=TARGET symlink (repeatable)")
	flag.Var(&entrypoint, "entrypoint", "entrypoint argument (repeatable, in order)")
	flag.Var(&cmd, "cmd", "cmd argument (repeatable, in order)")
	flag.Var(&env, "env", "KEY=VALUE (repeatable)")
	flag.Var(&trees, "tree", "LOCAL_DIR: every file, directory and symlink under it, at the image's root (repeatable)")
	user := flag.String("user", "", "config user, e.g. 65535:65535")
	arch := flag.String("arch", runtime.GOARCH, "the image's architecture: that of the binaries it holds")
	push := flag.String("push", "", "push mode: the docker-archive tarball (or OCI image layout directory) to push")
	registry := flag.String("registry", "", "push mode: the registry's host:port")
	ca := flag.String("ca", "", "push mode: the CA file the registry's certificate is verified with")
	wait := flag.Duration("wait", 60*time.Second, "push mode: how long to wait for the registry to answer /v2/")
	flag.Var(&as, "as", "push mode: REPOSITORY:TAG to push it as (repeatable)")
	flag.Parse()
	if *push != "" {
		if err := pushTarball(*push, *registry, *ca, as, *wait); err != nil {
			fmt.Fprintf(os.Stderr, "imagebuild: push %s: %v\n", *push, err)
			os.Exit(1)
		}
		return
	}
	if err := build(*ref, *out, adds, links, trees, entrypoint, cmd, env, *user, *arch); err != nil {
		fmt.Fprintf(os.Stderr, "imagebuild: %v\n", err)
		os.Exit(1)
	}
}

// layer is one tar: every file and link given, parent directories first, all owned by root, mtime 0.
func layer(adds, links, trees []string) ([]byte, error) {
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
	for _, t := range trees {
		if err := addTree(tw, t, dirs, mkdirs); err != nil {
			return nil, err
		}
	}
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

// addTree writes every entry under root (filepath.WalkDir's lexical order), modes kept, owned by root.
func addTree(tw *tar.Writer, root string, dirs map[string]bool, mkdirs func(string) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := mkdirs("/" + rel); err != nil {
			return err
		}
		h := &tar.Header{Name: rel, Mode: int64(info.Mode().Perm()), ModTime: time.Unix(0, 0)}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			h.Typeflag = tar.TypeSymlink
			if h.Linkname, err = os.Readlink(p); err != nil {
				return err
			}
		case info.IsDir():
			h.Typeflag, h.Name = tar.TypeDir, rel+"/"
			if dirs[h.Name] {
				return nil
			}
			dirs[h.Name] = true
		case info.Mode().IsRegular():
			h.Typeflag, h.Size = tar.TypeReg, info.Size()
		default:
			return fmt.Errorf("-tree %s: %s is neither a file, a directory nor a symlink", root, rel)
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
}

// pushTarball writes the image of a docker-archive tarball to registry under each name in as,
// once the registry answers GET /v2/ (it may have just been started: this runs as its unit's
// ExecStartPost).
func pushTarball(file, registry, caFile string, as []string, wait time.Duration) error {
	if registry == "" || caFile == "" || len(as) == 0 {
		return fmt.Errorf("-push needs -registry, -ca and at least one -as")
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	deadline := time.Now().Add(wait)
	for {
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://" + registry + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("GET /v2/: %s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("registry %s did not answer within %s: %v", registry, wait, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	img, err := imageAt(file)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	for _, a := range as {
		tag, err := name.NewTag(registry+"/"+a, name.StrictValidation)
		if err != nil {
			return err
		}
		if err := remote.Write(tag, img, remote.WithTransport(tr)); err != nil {
			return fmt.Errorf("%s: %w", tag, err)
		}
		fmt.Printf("pushed %s@%s\n", tag, digest)
	}
	return nil
}

// imageAt reads a docker-archive tarball, or an OCI image layout directory holding one image.
func imageAt(path string) (v1.Image, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return tarball.ImageFromPath(path, nil)
	}
	idx, err := layout.ImageIndexFromPath(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not an OCI image layout: %w", path, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s holds %d manifests in its index.json; push a layout with one image", path, len(m.Manifests))
	}
	return idx.Image(m.Manifests[0].Digest)
}

func build(ref, out string, adds, links, trees, entrypoint, cmd, env []string, user, arch string) error {
	if ref == "" || out == "" {
		return fmt.Errorf("-ref and -out are required")
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	data, err := layer(adds, links, trees)
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
