// Package controller holds the handlers of Shape v1 and v2.
package controller
