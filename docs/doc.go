// Package docs holds no code: its tests check that the documentation stands
// on its own (every link resolves inside the repository, no internal issue
// numbers) and that the Kubernetes manifests of kubernetes.md are sound.
package docs
