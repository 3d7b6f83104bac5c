package devserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
	"github.com/cairnhq/cairn/infra/await"
	"github.com/cairnhq/cairn/infra/bootstrap"
	"github.com/cairnhq/cairn/infra/readmodels"
	"github.com/cairnhq/cairn/infra/vfstorage"
)

// childDirEnv makes this test binary run a server in that data directory
// (TestMain), for a test to kill.
const childDirEnv = "CAIRN_TEST_DEVSERVER_CHILD_DIR"

// runChild serves until killed, and says "ready" on stdout once it serves.
func runChild(dir string) int {
	cfg := testConfig(dir)
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.OnReady = func(Endpoints) { fmt.Println("ready") }
	if err := Run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestKilledDuringVFolderCreates kills (SIGKILL) a server process while
// clients create folders in a loop, then starts it again. Wherever the
// kill fell, the audit trail holds a record of success only for a folder
// that exists (in the folder's own stream), every folder has its
// directory, and the restarted server's collector sets aside every
// directory that no folder owns.
func TestKilledDuringVFolderCreates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child: %q, %v\n%s", line, err, stderr.String())
	}
	creds, err := bootstrap.Load(dir)
	if err != nil {
		t.Fatal(err)
	}

	// Four clients create folders until the server dies; once 40 creates
	// have been answered 201, the server is killed.
	var (
		mu       sync.Mutex
		answered []uuid.UUID // the folders answered 201
		others   []int       // the statuses of other answers
		once     sync.Once
		wg       sync.WaitGroup
	)
	enough := make(chan struct{})
	client := &http.Client{Timeout: 30 * time.Second}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				body := fmt.Sprintf(`{"name":"w%d-%d"}`, w, i)
				req, _ := http.NewRequest("POST", creds.APIURL+"/v1/vfolders", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+creds.Token)
				resp, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				var written struct {
					ID uuid.UUID `json:"id"`
				}
				derr := json.NewDecoder(resp.Body).Decode(&written)
				resp.Body.Close()
				mu.Lock()
				if resp.StatusCode == http.StatusCreated && derr == nil {
					answered = append(answered, written.ID)
				} else {
					others = append(others, resp.StatusCode)
				}
				n := len(answered)
				mu.Unlock()
				if n >= 40 {
					once.Do(func() { close(enough) })
				}
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(2 * time.Minute):
		t.Error("40 creates not answered 201 in 2 minutes")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	wg.Wait()
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child did not die of SIGKILL: %v\n%s", werr, stderr.String())
	}

	// The next start, with a grace that every directory is past.
	cfg := testConfig(dir)
	cfg.VFolderOrphanGrace = time.Nanosecond
	r := start(t, cfg)
	hostDir := filepath.Join(dir, vfolderDir)
	var dirs []uuid.UUID
	await.Until(t, time.Minute, "no directory without a folder left after the restart", func() bool {
		dirs = folderDirs(t, hostDir)
		for _, id := range dirs {
			if status, _ := r.get(t, "/v1/vfolders/"+id.String(), true); status == http.StatusNotFound {
				return false
			}
		}
		return true
	})
	r.stop(t)

	store, db, err := readmodels.Open(t.Context(), "sqlite://"+filepath.Join(dir, "cairn.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer store.Close()
	folders := map[uuid.UUID]bool{}
	var successes []audit.Record
	var streams []string
	for after := uint64(0); ; {
		recs, err := store.ReadAll(t.Context(), after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			break
		}
		for _, rec := range recs {
			after = rec.Position
			switch rec.Type {
			case domain.TypeVFolderCreated:
				ev, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
				if err != nil {
					t.Fatal(err)
				}
				folders[ev.(domain.VFolderCreated).FolderID] = true
			case domain.TypeAccessLogged:
				ev, err := domain.DecodeEvent(rec.Type, rec.Version, rec.Data)
				if err != nil {
					t.Fatal(err)
				}
				if a := ev.(domain.AccessLogged).Record; a.Action == "POST /v1/vfolders" && a.Outcome == audit.Success {
					successes = append(successes, a)
					streams = append(streams, rec.Stream)
				}
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range answered {
		if !folders[id] {
			t.Errorf("folder %s was answered 201 and does not exist", id)
		}
	}
	if len(successes) < len(answered) {
		t.Errorf("%d records of success for %d creates answered 201", len(successes), len(answered))
	}
	for i, a := range successes {
		id, err := uuid.Parse(a.EntityID)
		if err != nil || a.EntityType != "vfolder" || streams[i] != domain.VFolderStream(id).String() || !folders[id] {
			t.Errorf("a record of success for %s %s, in %s, names no folder", a.EntityType, a.EntityID, streams[i])
		}
	}
	onDisk := map[uuid.UUID]bool{}
	for _, id := range dirs {
		onDisk[id] = true
	}
	for id := range folders {
		if !onDisk[id] {
			t.Errorf("folder %s has no directory", id)
		}
	}
	t.Logf("%d answered 201 (other answers: %v), %d folders, %d records of success, %d directories, %d set aside",
		len(answered), others, len(folders), len(successes), len(dirs), len(folderDirsIn(t, filepath.Join(hostDir, vfstorage.LostAndFound))))
}

// folderDirs lists the folder directories of a host directory.
func folderDirs(t *testing.T, hostDir string) []uuid.UUID {
	t.Helper()
	fans, err := os.ReadDir(hostDir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uuid.UUID
	for _, f := range fans {
		if len(f.Name()) == 2 {
			ids = append(ids, folderDirsIn(t, filepath.Join(hostDir, f.Name()))...)
		}
	}
	return ids
}

func folderDirsIn(t *testing.T, dir string) []uuid.UUID {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var ids []uuid.UUID
	for _, e := range entries {
		if id, err := uuid.Parse(e.Name()); err == nil && e.IsDir() {
			ids = append(ids, id)
		}
	}
	return ids
}
