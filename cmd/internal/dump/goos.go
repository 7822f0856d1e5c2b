package dump

import goruntime "runtime"

// runtimeGOOS is the system pyattach runs on.
const runtimeGOOS = goruntime.GOOS
