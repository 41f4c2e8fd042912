package osm

import (
	"context"
	"net/http"
	"time"
)

// UserExpiry is when OSM expires the Client's user. OSM's user management (nbi.cfg
// user_management: True, the default) expires a password pwd_expire_days (30) after it was
// changed, when a login answers change_password, and an account account_expire_days (90) after
// it was made or renewed, when logins are refused (authconn_internal.py create_user,
// update_user, validate_user). A zero time is one OSM does not set: for the admin user, without
// user management, with Keystone; or one that is no time (answerTime), which is logged.
type UserExpiry struct {
	PasswordExpires time.Time
	AccountExpires  time.Time
}

// userRecord is what osmops reads of OSM's record of a user: its expiry (the record also holds
// the password's hash, never decoded).
type userRecord struct {
	Admin struct {
		PasswordExpireTime Number `json:"password_expire_time"`
		AccountExpireTime  Number `json:"account_expire_time"`
	} `json:"_admin"`
}

// UserExpiry reads when OSM expires the Client's password and account, from its user record
// (GET /admin/v1/users/{id}, which any user may read of itself: auth.py check_permissions,
// "Bug 853"). The token answer tells neither; it names the user's id. Before a login, or when
// the login named no usable id, it returns a zero UserExpiry and asks nothing; once OSM refused
// the record, it asks no more and logs in no more for it.
func (c *Client) UserExpiry(ctx context.Context) (UserExpiry, error) {
	c.tokenMutex.Lock()
	userID, refused := c.userID, c.userRecordRefused
	c.tokenMutex.Unlock()
	if userID == "" || refused {
		return UserExpiry{}, nil
	}
	req := userRequest(userID)
	req.refusalIsAnswer = true
	record, err := fetch[userRecord](ctx, c, req)
	if status := statusOf(err); status == http.StatusUnauthorized || status == http.StatusForbidden {
		// A role without the permission: the expiry is unknown, as without user management.
		c.tokenMutex.Lock()
		c.userRecordRefused = true
		c.tokenMutex.Unlock()
		return UserExpiry{}, nil
	}
	if err != nil {
		return UserExpiry{}, err
	}
	// Out of range, an expiry is unknown: in the status, a later one than RFC 3339 writes would
	// make the API server refuse every write.
	read := func(field string, seconds Number) time.Time {
		at, ok := answerTime(seconds)
		if !ok {
			c.warnOutOfRange(ctx, req, field, "unknown")
		}
		return at
	}
	return UserExpiry{
		PasswordExpires: read("_admin.password_expire_time", record.Admin.PasswordExpireTime),
		AccountExpires:  read("_admin.account_expire_time", record.Admin.AccountExpireTime),
	}, nil
}
