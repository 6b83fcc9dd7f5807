// Package controller holds the webhook golden project's handlers.
package controller
