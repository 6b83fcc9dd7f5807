// Package controller holds handlers of built-in kinds only.
package controller
