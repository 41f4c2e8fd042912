package devstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"maps"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultBranch is the branch of every repository the Git server creates.
const DefaultBranch = "main"

// gitEnv makes the git commands independent of the user's and the system's settings, and gives
// commits an author.
var gitEnv = []string{
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_CONFIG_GLOBAL=" + os.DevNull,
	"GIT_TERMINAL_PROMPT=0",
	"GIT_AUTHOR_NAME=osmops devstack",
	"GIT_AUTHOR_EMAIL=devstack@osmops.invalid",
	"GIT_COMMITTER_NAME=osmops devstack",
	"GIT_COMMITTER_EMAIL=devstack@osmops.invalid",
}

// GitServer serves the bare repositories of a folder over Git's smart HTTP protocol, fetch and
// push, with no authentication: Git's own git-http-backend behind net/http/cgi.
type GitServer struct {
	root    string
	clones  string
	baseURL string
	server  *http.Server
	logFile *os.File
}

// startGitServer serves the repositories under root on the loopback port, logging to logPath.
// clones is where the working clones of Repo live.
func startGitServer(root, clones string, port int, backend, logPath string) (*GitServer, error) {
	for _, dir := range []string{root, clones} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	listener, err := listen(port, PartGitServer)
	if err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		_ = listener.Close()
		return nil, err
	}
	logger := log.New(logFile, "", log.LstdFlags)
	handler := &cgi.Handler{
		Path:   backend,
		Env:    []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
		Logger: logger,
		Stderr: logFile,
	}
	g := &GitServer{
		root:    root,
		clones:  clones,
		baseURL: "http://" + listener.Addr().String(),
		server:  &http.Server{Handler: logRequests(logger, handler), ReadHeaderTimeout: 10 * time.Second, ErrorLog: logger},
		logFile: logFile,
	}
	go func() { _ = g.server.Serve(listener) }()
	return g, nil
}

// logRequests logs one line per request, so that a failure dump shows who fetched and pushed.
func logRequests(logger *log.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		next.ServeHTTP(w, r)
		logger.Printf("%s %s %s (%s)", r.Method, r.URL.Path, r.URL.RawQuery, time.Since(started).Round(time.Millisecond))
	})
}

// URL returns the clone URL of the repository name.
func (g *GitServer) URL(name string) string { return g.baseURL + "/" + name + ".git" }

// close stops serving and closes the log.
func (g *GitServer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	return errors.Join(g.server.Shutdown(ctx), g.logFile.Close())
}

// CreateRepo creates an empty bare repository name that accepts pushes over HTTP, and a working
// clone of it to commit and push from.
func (g *GitServer) CreateRepo(name string) (*Repo, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return nil, fmt.Errorf("repository name %q: want a plain name, without slashes or a leading dot", name)
	}
	bare := filepath.Join(g.root, name+".git")
	if _, err := os.Stat(bare); err == nil {
		return nil, fmt.Errorf("repository %s already exists", bare)
	}
	repo := &Repo{name: name, url: g.URL(name), clone: filepath.Join(g.clones, name)}
	if _, err := git("", "init", "--quiet", "--bare", "--initial-branch="+DefaultBranch, bare); err != nil {
		return nil, err
	}
	// Anonymous pushes are refused unless the repository says otherwise.
	if _, err := git(bare, "config", "http.receivepack", "true"); err != nil {
		return nil, err
	}
	if _, err := git("", "init", "--quiet", "--initial-branch="+DefaultBranch, repo.clone); err != nil {
		return nil, err
	}
	if _, err := git(repo.clone, "remote", "add", "origin", repo.url); err != nil {
		return nil, err
	}
	return repo, nil
}

// Repo is a repository of the Git server with a working clone that commits and pushes over
// HTTP, as a person would. Its methods are safe for concurrent use.
type Repo struct {
	name, url, clone string
	mu               sync.Mutex
}

// Name returns the repository's name.
func (r *Repo) Name() string { return r.name }

// URL returns the repository's clone URL.
func (r *Repo) URL() string { return r.url }

// Seed commits and pushes every file of the folder dir, at the same relative paths, and returns
// the commit's sha.
func (r *Repo) Seed(dir string) (string, error) { return r.SeedAt(dir, "") }

// SeedAt is Seed with the files put under the folder at (slash-separated) of the repository.
func (r *Repo) SeedAt(dir, at string) (string, error) {
	files, err := readTree(dir)
	if err != nil {
		return "", err
	}
	placed := make(map[string]string, len(files))
	for name, content := range files {
		placed[path.Join(at, name)] = content
	}
	return r.Commit(placed, "Seed from "+filepath.Base(dir))
}

// Commit writes files (relative path to content), commits them with message and pushes the
// commit; it returns the commit's sha. A commit that changes nothing is still made, so that a
// test can make a new revision at will.
func (r *Repo) Commit(files map[string]string, message string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	paths := slices.Sorted(maps.Keys(files))
	for _, file := range paths {
		full, err := r.pathInClone(file)
		if err != nil {
			return "", err
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, []byte(files[file]), 0o644); err != nil {
			return "", err
		}
	}
	if _, err := git(r.clone, append([]string{"add", "--"}, paths...)...); err != nil {
		return "", err
	}
	return r.commitAndPush("commit", "--quiet", "--allow-empty", "-m", message)
}

// Remove deletes paths (files or folders), commits and pushes; it returns the commit's sha.
func (r *Repo) Remove(paths ...string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, file := range paths {
		if _, err := r.pathInClone(file); err != nil {
			return "", err
		}
	}
	if _, err := git(r.clone, append([]string{"rm", "--quiet", "-r", "--"}, paths...)...); err != nil {
		return "", err
	}
	return r.commitAndPush("commit", "--quiet", "-m", "Remove "+strings.Join(paths, ", "))
}

// Revert commits and pushes the revert of the commit sha, as `git revert` does; it returns the
// new commit's sha.
func (r *Repo) Revert(sha string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.commitAndPush("revert", "--no-edit", sha)
}

// commitAndPush runs the git command that makes a commit, pushes it and returns its sha.
func (r *Repo) commitAndPush(commit ...string) (string, error) {
	if _, err := git(r.clone, commit...); err != nil {
		return "", err
	}
	if _, err := git(r.clone, "push", "--quiet", "origin", "HEAD:refs/heads/"+DefaultBranch); err != nil {
		return "", err
	}
	sha, err := git(r.clone, "rev-parse", "HEAD")
	return strings.TrimSpace(sha), err
}

// pathInClone maps a repository path to the working clone, refusing paths that leave it.
func (r *Repo) pathInClone(file string) (string, error) {
	if !filepath.IsLocal(file) {
		return "", fmt.Errorf("repository %s: path %q must be relative and stay inside the repository", r.name, file)
	}
	return filepath.Join(r.clone, file), nil
}

// git runs git in dir (or the current folder when dir is empty) and returns its output; the
// error quotes git's own message.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// readTree reads every regular file under dir into a map of slash-separated relative path to
// content.
func readTree(dir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, entry fs.DirEntry, err error) error {
		if err != nil || !entry.Type().IsRegular() {
			return err
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(content)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no files to seed a repository with", dir)
	}
	return files, nil
}
