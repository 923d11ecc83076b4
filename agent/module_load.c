/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The executable's side of the daemon module: find it, load it, check that it
 * is the module of this very version, run it. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/log.h"
#include "agent/module.h"
#include "config.h"

#define PATH_LEN (PATH_MAX + sizeof(TCX_MODULE_NAME) + 1)

/* The module next to the running executable, when there is one: a build
 * tree (make check, distcheck's VPATH build) has both in the top build
 * directory. */
static int module_next_to_exe(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	int w;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	w = snprintf(out, len, "%s/%s", exe, TCX_MODULE_NAME);
	if (w < 0 || (size_t)w >= len)
		return -1;
	return access(out, F_OK) == 0 ? 0 : -1;
}

static void module_path(char *out, size_t len)
{
	const char *env = secure_getenv(TCX_MODULE_ENV);

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return;
	}
	if (module_next_to_exe(out, len) == 0)
		return;
	snprintf(out, len, "%s/%s", PKGLIBDIR, TCX_MODULE_NAME);
}

int tcx_run_daemon_module(const struct tcx_daemon_opts *o)
{
	char path[PATH_LEN];
	tcx_module_daemon_main_fn *run;
	const char *id;
	void *h, *sym;

	module_path(path, sizeof(path));
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		log_err("cannot load the daemon module %s: %s", path, dlerror());
		return 1;
	}
	id = dlsym(h, "tcx_module_id");
	if (!id) {
		log_err("%s is not a tcexporter daemon module: %s", path, dlerror());
		return 1;
	}
	if (strcmp(id, TCX_MODULE_ID) != 0) {
		log_err("the daemon module %s is '%.80s', this executable is '%s': install the "
		        "module of this version",
		        path, id, TCX_MODULE_ID);
		return 1;
	}
	sym = dlsym(h, "tcx_module_daemon_main");
	if (!sym) {
		log_err("%s is not a tcexporter daemon module: %s", path, dlerror());
		return 1;
	}
	run = (tcx_module_daemon_main_fn *)sym;
	/* Not unloaded: the process exits when the daemon returns. */
	return run(o);
}
