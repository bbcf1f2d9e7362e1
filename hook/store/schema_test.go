package store

import (
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestReadSchema(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cabinet.db")
	if v, err := ReadSchema(path); v != 0 || err != nil {
		t.Fatalf("no store: ReadSchema = %d, %v; want 0, nil", v, err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if v, err := ReadSchema(path); v != SchemaVersion || err != nil {
		t.Fatalf("ReadSchema = %d, %v; want %d", v, err, SchemaVersion)
	}
	// A newer Cabinet's store: reported as is, and refused by Open.
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return putUint(tx.Bucket(bMeta), kSchema, SchemaVersion+1) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if v, err := ReadSchema(path); v != SchemaVersion+1 || err != nil {
		t.Fatalf("ReadSchema = %d, %v; want %d", v, err, SchemaVersion+1)
	}
	if s, err := Open(path, Options{}); err == nil {
		s.Close()
		t.Fatal("Open accepted a store with a newer schema")
	}
}
