package store

import (
	"encoding/json"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// Achievements is the log of RetroAchievements unlocks, every one, whether a session was known or
// logged (a session keeps its own first few too): written once per unlock, in the transaction that
// makes it final (hook/journal), read by batocera_play_history. Keys are AchievementKey, so they sort
// by time.
var Achievements = Records[haentities.Achievement]{Name: "achievements"}

// AchievementKey is an unlock's key in the log: its UTC time to the millisecond, then its id
// ("20260102T190000.123Z-12345"). An unlock applied twice keeps one record.
func AchievementKey(a haentities.Achievement) string {
	return a.At.UTC().Format(keyTime) + "-" + strconv.FormatUint(uint64(a.ID), 10)
}

const keyTime = "20060102T150405.000Z"

// AchievementsIn returns the unlocks of [since, until) (zero: unbounded), newest first, at most
// limit (≤0: all), and how many the period holds in all.
func (s *Store) AchievementsIn(since, until time.Time, limit int) (out []haentities.Achievement, total int, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(Achievements.Name))
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.Last()
		if !until.IsZero() {
			// Keys begin with the UTC time: start just past until's, a day on for a clock that was
			// off; every record's own time is still checked.
			if k, v = c.Seek([]byte(until.UTC().Add(24 * time.Hour).Format(keyTime))); k == nil {
				k, v = c.Last()
			}
		}
		for ; k != nil; k, v = c.Prev() {
			a, ok := decodeAchievement(v)
			if !ok {
				continue
			}
			if !until.IsZero() && !a.At.Before(until) {
				continue
			}
			if !since.IsZero() && a.At.Before(since) {
				if a.At.Before(since.Add(-24 * time.Hour)) {
					break
				}
				continue
			}
			total++
			if limit <= 0 || len(out) < limit {
				out = append(out, a)
			}
		}
		return nil
	})
	return out, total, err
}

func decodeAchievement(v []byte) (haentities.Achievement, bool) {
	var a haentities.Achievement
	if json.Unmarshal(v, &a) != nil || a.At.IsZero() {
		return haentities.Achievement{}, false
	}
	return a, true
}
