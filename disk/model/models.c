// SPDX-License-Identifier: MIT
/*
 * models.c - the table of lab-disk models and the --model lookup.
 */
#include "model.h"

#include <stddef.h>
#include <string.h>

static const struct disk_model *const models[] = {
    &disk_model_hdd, &disk_model_ssd,	   &disk_model_nvme,
    &disk_model_ram, &disk_model_throttle,
};

const struct disk_model *disk_model_find(const char *spec, const char **arg)
{
	size_t n = strcspn(spec, ":");
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		const struct disk_model *m = models[i];
		if (!m || strlen(m->name) != n || strncmp(m->name, spec, n))
			continue;
		*arg = spec[n] == ':' ? spec + n + 1 : NULL;
		return m;
	}
	return NULL;
}

/* The models in table order, for --help and `flushkit disk models`. */
const struct disk_model *disk_model_at(size_t i)
{
	for (size_t j = 0; j < sizeof(models) / sizeof(models[0]); j++)
		if (models[j] && i-- == 0)
			return models[j];
	return NULL;
}
