// Command migrate plays a newer Cabinet's first start in the broken-upgrade
// test: it migrates the store (raises its schema version, as a real
// migration would) and then fails, so the installer must roll back the
// binary and the store.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: migrate STORE SCHEMA")
		os.Exit(2)
	}
	var schema uint64
	fmt.Sscan(os.Args[2], &schema)
	db, err := bolt.Open(os.Args[1], 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("meta"))
		if err != nil {
			return err
		}
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, schema)
		return b.Put([]byte("schema"), v)
	})
	db.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "panic: the new store layout is not readable by this build (a broken release)")
	os.Exit(1)
}
